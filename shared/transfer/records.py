"""One exported memory: a JSON Lines record with every field a memory and its events carry.

The line is what ``export`` writes and ``import`` reads. No embedding travels: an import embeds
with the configured model, which is what makes ``migrate`` and ``reembed`` the same operation.
"""

from __future__ import annotations

from typing import Final

import msgspec

from shared.errors import InvalidInputError
from shared.model import (
    Draft,
    Memory,
    canonical_iso,
    check_limits,
    iso_ms,
    parse_iso_ms,
    ulid_time_ms,
)
from shared.model.counters import AccessCount
from shared.model.draft import texts_of
from shared.model.ids import MAX_CONVERSATION_CHARS, is_conversation
from shared.model.keys import MAX_EXPIRY_MS

FORMAT: Final = "mcp-memory/1"


class ExportedMemory(
    Draft, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """A memory as one line: the caller's fields (``Draft``, under their outward names: the
    type is ``type``), the system's, and its events. ``replaced_by``: the memories that
    replaced it (its replacement records); ``superseded_by``: the memories that probably update
    it (its links that stand); ``access`` and ``last_access_at``: its counters when it was
    exported."""

    id: str
    tenant: str
    created_at: str
    conversation: str | None = None
    trust_base: float = 1.0
    expires_at: str | None = None
    replaced_by: list[str] = msgspec.field(default_factory=list)
    superseded_by: list[str] = msgspec.field(default_factory=list)
    access: int = 0
    last_access_at: str | None = None
    format: str = FORMAT

    def memory(self, tenant: str) -> Memory:
        return Memory(tenant=tenant, **{name: getattr(self, name) for name in SHARED_FIELDS})

    def counts(self) -> AccessCount | None:
        if not self.access:
            return None
        return AccessCount(access=self.access, last_at=self.last_access_at or self.created_at)


# The fields a line and a Memory share, name and value alike: all but the tenant, which is the
# import's.
SHARED_FIELDS: Final = tuple(name for name in Memory.__struct_fields__ if name != "tenant")


def exported(
    memory: Memory,
    *,
    replaced_by: tuple[str, ...],
    counts: AccessCount | None,
    superseded_by: tuple[str, ...] = (),
) -> ExportedMemory:
    return ExportedMemory(
        tenant=memory.tenant,
        **{name: getattr(memory, name) for name in SHARED_FIELDS},
        replaced_by=list(replaced_by),
        superseded_by=list(superseded_by),
        access=counts.access if counts is not None else 0,
        last_access_at=counts.last_at if counts is not None and counts.access else None,
    )


_DECODER: Final = msgspec.json.Decoder(ExportedMemory)
_ENCODER: Final = msgspec.json.Encoder()


def encode_line(record: ExportedMemory) -> str:
    return _ENCODER.encode(record).decode()


def decode_line(line: str) -> ExportedMemory:
    """The record a line holds, checked as ``remember`` checks its arguments.

    Raises:
        InvalidInputError: the line is not a valid record; the error names the field.
    """
    try:
        record = _DECODER.decode(line)
    except msgspec.ValidationError as error:
        field = _field_of(str(error))
        raise InvalidInputError(field, f"{error}") from error
    except msgspec.DecodeError as error:
        raise InvalidInputError("line", f"not a JSON object: {error}") from error
    _check(record)
    return record


def _field_of(message: str) -> str:
    # msgspec names the path as "at `$.field`" or "Object missing required field `field`".
    for marker in ("`$.", "field `"):
        if marker in message:
            rest = message.split(marker, 1)[1]
            return rest.split("`", 1)[0].split("[", 1)[0].split(".", 1)[0]
    return "line"


def _check(record: ExportedMemory) -> None:
    if record.format != FORMAT:
        raise InvalidInputError("format", f"`format` is {record.format!r}; this reads {FORMAT!r}")
    if ulid_time_ms(record.id) is None:
        raise InvalidInputError("id", "`id` must be a memory id: a 26-character ULID")
    _check_times(record)
    _check_sizes(record)
    if record.conversation is not None and not is_conversation(record.conversation):
        raise InvalidInputError(
            "conversation",
            f"`conversation` must be at most {MAX_CONVERSATION_CHARS} characters of printable "
            "ASCII with no whitespace, as the X-Conversation-Id header that names it",
        )
    if record.scope == "conversation" and not record.conversation:
        raise InvalidInputError(
            "conversation", 'a `scope` "conversation" memory needs `conversation`'
        )
    if record.access < 0:
        raise InvalidInputError("access", "`access` must be 0 or more")
    # Trust scales the tie-break, which must stay a tie-break: remember writes 1.0.
    if not 0.0 <= record.trust_base <= 1.0:
        raise InvalidInputError(
            "trust_base", f"`trust_base` must be between 0 and 1, got {record.trust_base!r}"
        )
    for field in ("replaced_by", "superseded_by"):
        for new_id in getattr(record, field):
            if ulid_time_ms(new_id) is None:
                raise InvalidInputError(field, f"`{field}` must hold memory ids")
    if record.id in record.superseded_by:
        raise InvalidInputError(
            "superseded_by",
            "`superseded_by` names the line's own id: a memory cannot update itself",
        )


def _check_times(record: ExportedMemory) -> None:
    """Each time parsed once, here, and kept in the one form every reader compares
    (``canonical_iso``); an expiry within what an expiry key can hold."""
    for field in ("created_at", "expires_at", "last_access_at"):
        value = getattr(record, field)
        if value is None:
            continue
        canonical = canonical_iso(value)
        if canonical is None:
            raise InvalidInputError(field, f"`{field}` must be an ISO-8601 time")
        msgspec.structs.force_setattr(record, field, canonical)
    expires_ms = parse_iso_ms(record.expires_at) if record.expires_at is not None else None
    if expires_ms is not None and not 0 <= expires_ms <= MAX_EXPIRY_MS:
        raise InvalidInputError(
            "expires_at",
            f"`expires_at` must be between {iso_ms(0)} and {iso_ms(MAX_EXPIRY_MS)}",
        )


def _check_sizes(record: ExportedMemory) -> None:
    """The limits remember applies to its arguments (``Draft``'s)."""
    texts = [*texts_of(record), ("conversation", record.conversation)]
    for field, text in texts:
        if text is not None and "\x00" in text:
            # Refused by name, as remember refuses it: PostgreSQL cannot store U+0000 in text.
            raise InvalidInputError(field, f"`{field}` contains a NUL character (U+0000)")
    check_limits(record)
