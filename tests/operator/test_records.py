"""An exported line and a Memory carry the same fields, by the same names: the line is the
memory's draft (``shared.model.Draft``) with the system's fields and its events."""

from __future__ import annotations

import msgspec

from shared.model import Memory
from shared.model.counters import AccessCount
from shared.transfer.records import SHARED_FIELDS, ExportedMemory, encode_line, exported


def test_every_field_of_a_memory_travels_in_a_line() -> None:
    # Only the tenant is not the line's: an import names its own.
    memory_fields = {field.name for field in msgspec.structs.fields(Memory)}
    assert memory_fields == set(SHARED_FIELDS) | {"tenant"}
    assert set(SHARED_FIELDS) <= {field.name for field in msgspec.structs.fields(ExportedMemory)}


def test_a_memory_comes_back_whole_from_its_line() -> None:
    memory = Memory(
        id="01JZ0000000000000000000000",
        tenant="acme",
        content="The staging database is db-2.",
        memory_type="reference",
        category="infra",
        tags=("db", "staging"),
        scope="conversation",
        conversation="thread-7",
        created_at="2026-01-02T03:04:05.678Z",
        trust_base=0.8,
        expires_at="2026-02-02T03:04:05.678Z",
    )
    line = exported(
        memory,
        replaced_by=("01JZ0000000000000000000001",),
        counts=AccessCount(access=3, last_at="2026-01-03T00:00:00.000Z"),
    )
    assert (line.memory_type, line.tags, line.replaced_by, line.access) == (
        "reference",
        ("db", "staging"),
        ["01JZ0000000000000000000001"],
        3,
    )
    assert '"type":"reference"' in encode_line(line)  # the field's outward name
    assert line.memory("acme") == memory
    assert line.memory("other").tenant == "other"
