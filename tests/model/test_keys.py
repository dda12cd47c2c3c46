"""Key layouts read back: index keys with and without expiry, expiry keys in time order, and
replacement records named by their key alone."""

from __future__ import annotations

import pytest

from shared.model import Memory, conversation_digest, index_key, iso_ms, new_ulid, parse_index_key
from shared.model.keys import (
    IndexEntry,
    expiry_key,
    expiry_key_of,
    parse_expiry_key,
    parse_revision_key,
    replaced_key,
    replaced_prefix,
)

NOW_MS = 1_800_000_000_000
EXPIRES_MS = NOW_MS + 86_400_000


def memory(**fields: object) -> Memory:
    return Memory(
        id=new_ulid(NOW_MS),
        tenant="acme",
        content="a fact",
        created_at=iso_ms(NOW_MS),
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("fields", "digest", "expires_ms"),
    [
        ({}, None, None),
        ({"expires_at": iso_ms(EXPIRES_MS)}, None, EXPIRES_MS),
        ({"scope": "conversation", "conversation": "chat:42"}, "chat:42", None),
        (
            {"scope": "conversation", "conversation": "chat:42", "expires_at": iso_ms(EXPIRES_MS)},
            "chat:42",
            EXPIRES_MS,
        ),
        # A project memory keeps its conversation as provenance only: no digest on the key.
        ({"conversation": "chat:42", "expires_at": iso_ms(EXPIRES_MS)}, None, EXPIRES_MS),
    ],
)
def test_an_index_key_parses_back_to_the_memory_it_was_made_from(
    fields: dict[str, object], digest: str | None, expires_ms: int | None
) -> None:
    stored = memory(memory_type="pattern", **fields)
    key = index_key(stored)
    assert key.startswith("index/acme/")
    assert parse_index_key(key) == IndexEntry(
        key=key,
        memory_id=stored.id,
        memory_type="pattern",
        conversation_digest=conversation_digest(digest) if digest is not None else None,
        expires_ms=expires_ms,
    )


def test_an_expiring_key_keeps_an_empty_digest_place_so_parts_stay_positional() -> None:
    stored = memory(expires_at=iso_ms(EXPIRES_MS))
    assert index_key(stored).endswith(f"#{stored.id}#project##{EXPIRES_MS}")


def test_keys_written_before_expiry_existed_still_parse() -> None:
    memory_id = new_ulid(NOW_MS)
    three = parse_index_key(f"index/acme/0000000000#{memory_id}#reference")
    assert three is not None
    assert (three.memory_id, three.memory_type, three.conversation_digest, three.expires_ms) == (
        memory_id,
        "reference",
        None,
        None,
    )
    four = parse_index_key(f"index/acme/0000000000#{memory_id}#conversation#0123456789abcdef")
    assert four is not None
    assert (four.memory_type, four.conversation_digest, four.expires_ms) == (
        "conversation",
        "0123456789abcdef",
        None,
    )


@pytest.mark.parametrize("expiry", ["", "soon", "-5", "12.5", "1e3", " 12"])
def test_a_malformed_expiry_part_makes_the_key_unreadable(expiry: str) -> None:
    assert parse_index_key(f"index/acme/0000000000#{new_ulid(NOW_MS)}#project##{expiry}") is None


def test_a_superscript_digit_in_the_expiry_part_is_refused_not_raised() -> None:
    assert parse_index_key(f"index/acme/0000000000#{new_ulid(NOW_MS)}#project##²") is None


def test_a_superscript_digit_in_an_expiry_key_is_refused_not_raised() -> None:
    assert parse_expiry_key("expiry/²#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV") is None


def test_an_index_entry_expires_at_its_own_millisecond() -> None:
    entry = parse_index_key(index_key(memory(expires_at=iso_ms(EXPIRES_MS))))
    assert entry is not None
    assert entry.expired(EXPIRES_MS)
    assert entry.expired(EXPIRES_MS + 1)
    assert not entry.expired(EXPIRES_MS - 1)
    never = parse_index_key(index_key(memory()))
    assert never is not None and not never.expired(2**60)


def test_expiry_keys_sort_by_time_as_bytes_across_tenants() -> None:
    memory_id = new_ulid(NOW_MS)
    due_order = [
        expiry_key("zeta", memory_id, 999),
        expiry_key("alpha", memory_id, 1_000),
        expiry_key("zeta", memory_id, NOW_MS),
        expiry_key("alpha", memory_id, NOW_MS + 1),
        expiry_key("alpha", memory_id, 9_999_999_999_999),
    ]
    assert sorted(due_order, key=str.encode) == due_order
    assert sorted(reversed(due_order), key=str.encode) == due_order


def test_an_expiry_key_parses_back() -> None:
    stored = memory(expires_at=iso_ms(EXPIRES_MS))
    key = expiry_key_of(stored)
    assert key == f"expiry/{EXPIRES_MS:013d}#acme#{stored.id}"
    entry = parse_expiry_key(key)
    assert entry is not None
    assert (entry.key, entry.tenant, entry.memory_id, entry.expires_ms) == (
        key,
        "acme",
        stored.id,
        EXPIRES_MS,
    )
    assert parse_expiry_key(expiry_key("acme", stored.id, 7)) is not None
    assert expiry_key_of(memory()) is None


@pytest.mark.parametrize(
    "key",
    [
        "expiry/",
        "expiry/0000000000999",
        "expiry/0000000000999#acme",
        "expiry/0000000000999#acme#",
        "expiry/0000000000999##01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "expiry/#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "expiry/soon#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "expiry/-0000000000999#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "expiry/0000000000999#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV#extra",
        "index/0000000000999#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "0000000000999#acme#01ARZ3NDEKTSV4RRFFQ69G5FAV",
    ],
)
def test_parse_expiry_key_refuses_junk(key: str) -> None:
    assert parse_expiry_key(key) is None


def test_a_replacement_record_is_its_key() -> None:
    old_id, new_id = new_ulid(NOW_MS), new_ulid(NOW_MS + 1)
    key = replaced_key("acme", old_id, new_id)
    assert key == f"replaced/acme/{old_id}#{new_id}"
    assert key.startswith(replaced_prefix("acme"))
    assert key.startswith(replaced_prefix("acme", old_id))
    assert not key.startswith(replaced_prefix("acme", new_id))
    assert parse_revision_key(key) == (old_id, new_id, "replaces")


@pytest.mark.parametrize(
    "key",
    [
        "replaced/acme/",
        "replaced/acme/old",
        "replaced/acme/old#",
        "replaced/acme/#new",
        "replaced/acme/old#new#more",
        "index/acme/0000000000#01ARZ3NDEKTSV4RRFFQ69G5FAV#project",
    ],
)
def test_parse_revision_key_refuses_junk(key: str) -> None:
    assert parse_revision_key(key) is None


def test_a_memory_expires_exactly_at_its_expiry_and_not_a_millisecond_before() -> None:
    at_now = memory(expires_at=iso_ms(NOW_MS))
    assert at_now.expired_by(NOW_MS)
    assert at_now.expired(iso_ms(NOW_MS))
    later = memory(expires_at=iso_ms(NOW_MS + 1))
    assert not later.expired_by(NOW_MS)
    assert not later.expired(iso_ms(NOW_MS))
    assert later.expired_by(NOW_MS + 1)
    assert not memory().expired_by(2**47)


def test_revision_records_of_each_kind_parse_back_and_old_readers_skip_the_new_ones() -> None:
    from shared.model.keys import link_key

    for kind in ("replaces", "supersedes", "kept"):
        key = link_key("acme", "01OLD", "01NEW", kind)
        assert parse_revision_key(key) == ("01OLD", "01NEW", kind)
    assert parse_revision_key("replaced/acme/01OLD#01NEW#other") is None
    assert parse_revision_key("replaced/acme/#01NEW") is None
