"""What the stores and export files already hold still reads the same, and is written the same.

The metadata and lines below were written by the codec and the export before a memory's fields
were declared once (``shared.model.Draft``); they are kept verbatim, so a change of the
declaration that changes a stored format fails here.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from shared.model import Memory
from shared.model.counters import AccessCount
from shared.storage.codec import from_metadata, to_metadata
from shared.transfer.records import decode_line, encode_line, exported

FULL = Memory(
    id="01JZ0000000000000000000000",
    tenant="acme",
    content="The staging database is db-2, é.",
    memory_type="reference",
    category="infra",
    tags=("db", "staging"),
    scope="conversation",
    conversation="thread-7",
    created_at="2026-01-02T03:04:05.678Z",
    trust_base=0.8,
    expires_at="2026-02-02T03:04:05.678Z",
)
PLAIN = Memory(
    id="01JZ0000000000000000000001",
    tenant="acme",
    content="Deploys go through CI.",
    created_at="2026-01-03T00:00:00.000Z",
)

# Written by the codec as it was, key order and all.
STORED = {
    FULL: '{"tenantId": "acme", "memoryType": "reference", "category": "infra", "scope": '
    '"conversation", "conversation": "thread-7", "expiresAt": "2026-02-02T03:04:05.678Z", '
    '"content": "The staging database is db-2, é.", "createdAt": "2026-01-02T03:04:05.678Z", '
    '"tags": ["db", "staging"], "trustBase": 0.8}',
    PLAIN: '{"tenantId": "acme", "memoryType": "project", "content": "Deploys go through CI.", '
    '"createdAt": "2026-01-03T00:00:00.000Z", "trustBase": 1.0}',
}
# Written by the export as it was.
LINES = {
    FULL: '{"id":"01JZ0000000000000000000000","tenant":"acme","content":"The staging database '
    'is db-2, é.","created_at":"2026-01-02T03:04:05.678Z","type":"reference","category":'
    '"infra","tags":["db","staging"],"scope":"conversation","conversation":"thread-7",'
    '"trust_base":0.8,"expires_at":"2026-02-02T03:04:05.678Z","replaced_by":'
    '["01JZ0000000000000000000002"],"superseded_by":["01JZ0000000000000000000003"],"access":3,'
    '"last_access_at":"2026-01-03T00:00:00.000Z"}',
    PLAIN: '{"id":"01JZ0000000000000000000001","tenant":"acme","content":"Deploys go through '
    'CI.","created_at":"2026-01-03T00:00:00.000Z","trust_base":1.0}',
}


def _events(memory: Memory) -> dict[str, Any]:
    if memory is PLAIN:
        return {"replaced_by": (), "counts": None}
    return {
        "replaced_by": ("01JZ0000000000000000000002",),
        "superseded_by": ("01JZ0000000000000000000003",),
        "counts": AccessCount(access=3, last_at="2026-01-03T00:00:00.000Z"),
    }


@pytest.mark.parametrize("memory", [FULL, PLAIN], ids=["every-field", "defaults"])
def test_stored_metadata_reads_back_the_same_memory(memory: Memory) -> None:
    assert from_metadata(f"acme#{memory.id}", json.loads(STORED[memory])) == memory


@pytest.mark.parametrize("memory", [FULL, PLAIN], ids=["every-field", "defaults"])
def test_a_memory_is_stored_with_the_same_keys_and_values(memory: Memory) -> None:
    # jsonb keeps no key order and S3 Vectors none that a reader sees: keys and values are
    # the format.
    assert to_metadata(memory) == json.loads(STORED[memory])


@pytest.mark.parametrize("memory", [FULL, PLAIN], ids=["every-field", "defaults"])
def test_an_exported_line_reads_back_the_same_record(memory: Memory) -> None:
    record = decode_line(LINES[memory])
    assert record.memory("acme") == memory
    assert record == exported(memory, **_events(memory))


@pytest.mark.parametrize("memory", [FULL, PLAIN], ids=["every-field", "defaults"])
def test_a_memory_is_exported_with_the_same_keys_and_values(memory: Memory) -> None:
    written = encode_line(exported(memory, **_events(memory)))
    assert msgspec.json.decode(written) == msgspec.json.decode(LINES[memory])


def test_damaged_metadata_reads_as_it_did() -> None:
    """Each caller's field not of its shape reads as its default, as the hand-written reader
    did: an unknown type, an empty category, a tag that is no string, an odd scope."""
    damaged = {
        "tenantId": "acme",
        "content": "x",
        "memoryType": ["project"],
        "category": "",
        "tags": ["ok", 3, None],
        "scope": "everyone",
        "createdAt": "yesterday",
        "trustBase": float("nan"),
    }
    memory = from_metadata("acme#01JZ0000000000000000000004", damaged)
    assert memory is not None
    assert (memory.memory_type, memory.category, memory.tags, memory.scope) == (
        "project",
        None,
        ("ok",),
        "project",
    )
    assert (memory.created_at, memory.trust_base) == ("1970-01-01T00:00:00.000Z", 1.0)
    assert from_metadata("acme#x", {"tenantId": "acme", "tags": "not-a-list", "content": "y"})


@pytest.mark.parametrize(("stored", "read"), [(1e6, 1.0), (-3, 0.0), (0.25, 0.25)])
def test_a_stored_trust_reads_within_zero_and_one(stored: float, read: float) -> None:
    """Trust scales the tie-break: a stored value beyond what remember writes must not let the
    tie-break outweigh relevance."""
    metadata = {"tenantId": "acme", "content": "x", "trustBase": stored}
    memory = from_metadata("acme#01JZ0000000000000000000005", metadata)
    assert memory is not None and memory.trust_base == read


def test_an_empty_text_is_still_stored() -> None:
    # A memory read from old metadata with an empty text keeps it when it is written again
    # (reembed, migrate): without its content key it would no longer read as a memory.
    memory = Memory(id=PLAIN.id, tenant="acme", content="", created_at=PLAIN.created_at)
    assert to_metadata(memory)["content"] == ""
    assert from_metadata(f"acme#{memory.id}", to_metadata(memory)) == memory
