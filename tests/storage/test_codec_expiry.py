"""expiresAt in vector metadata: written when set, read back, tolerated when damaged, and
within the filterable budget beside the longest values the API accepts."""

from __future__ import annotations

import pytest

from shared.model import MAX_CATEGORY_BYTES, Memory, iso_ms, new_ulid
from shared.model.ids import MAX_CONVERSATION_CHARS, MAX_TENANT_CHARS
from shared.storage.codec import (
    check_budget,
    from_metadata,
    to_metadata,
    vector_key,
)

NOW_MS = 1_800_000_000_000


def memory(**fields: object) -> Memory:
    return Memory(
        id=new_ulid(NOW_MS),
        tenant="acme",
        content="the staging database is wiped nightly",
        created_at=iso_ms(NOW_MS),
        **fields,  # type: ignore[arg-type]
    )


def test_expires_at_round_trips_through_metadata() -> None:
    stored = memory(expires_at=iso_ms(NOW_MS + 86_400_000), category="ops", tags=("db",))
    metadata = to_metadata(stored)
    assert metadata["expiresAt"] == iso_ms(NOW_MS + 86_400_000)
    assert from_metadata(vector_key(stored.tenant, stored.id), metadata) == stored
    assert from_metadata(stored.id, metadata) == stored


def test_no_expiry_writes_no_expires_at() -> None:
    stored = memory()
    metadata = to_metadata(stored)
    assert "expiresAt" not in metadata
    read = from_metadata(stored.id, metadata)
    assert read == stored and read.expires_at is None


@pytest.mark.parametrize("damaged", ["tomorrow", 5, "", None, ["2026-01-01T00:00:00.000Z"]])
def test_a_damaged_expires_at_reads_as_never_expiring(damaged: object) -> None:
    stored = memory(expires_at=iso_ms(NOW_MS))
    metadata = {**to_metadata(stored), "expiresAt": damaged}
    read = from_metadata(stored.id, metadata)
    assert read is not None
    assert read.expires_at is None
    assert read.content == stored.content


@pytest.mark.parametrize("category", ["c" * MAX_CATEGORY_BYTES, "é" * (MAX_CATEGORY_BYTES // 2)])
@pytest.mark.parametrize(
    # Printable ASCII that JSON escapes counts twice: the heaviest conversation id accepted.
    "conversation",
    ["c" * MAX_CONVERSATION_CHARS, "\\" * MAX_CONVERSATION_CHARS, '"' * MAX_CONVERSATION_CHARS],
)
def test_the_longest_accepted_values_with_an_expiry_fit_the_budget(
    category: str, conversation: str
) -> None:
    assert len(category.encode()) == MAX_CATEGORY_BYTES
    stored = Memory(
        id=new_ulid(NOW_MS),
        tenant="t" * MAX_TENANT_CHARS,
        content="x",
        memory_type="conversation",
        category=category,
        scope="conversation",
        conversation=conversation,
        created_at=iso_ms(NOW_MS),
        expires_at=iso_ms(NOW_MS + 3650 * 86_400_000),
    )
    metadata = to_metadata(stored)
    assert "expiresAt" in metadata
    check_budget(metadata)
