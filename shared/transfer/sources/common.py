"""What every source converter shares: the conversion it hands to import, stable ids and dates.

A converter reads another memory server's export and returns our own import records, each with
where it came from (``origin``: a file and line, a record index, a note), plus what it left out
and why. The records then go through the one import path (its screening, limits, dedup by id),
so a converter checks only the source's own shape.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from ulid import ULID

from shared.errors import RefusedError
from shared.model import MAX_TAG_BYTES, MemoryType, canonical_iso, iso_ms, parse_iso_ms
from shared.model.ids import MAX_ULID_TIME_MS
from shared.transfer.records import ExportedMemory, encode_line

# An epoch number above this is read as milliseconds, below as seconds (year 5138 in seconds).
_MS_THRESHOLD: Final = 100_000_000_000


class SourceError(RefusedError):
    """The source is not in the shape its format documents; nothing was written. The message
    names the place (file and line, record or note) and the field."""

    def __init__(self, origin: str, field: str, message: str) -> None:
        super().__init__(f"{origin}: {message}")
        self.origin = origin
        self.field = field


@dataclass(frozen=True)
class Taken:
    origin: str
    record: ExportedMemory

    def line(self) -> str:
        return encode_line(self.record)


@dataclass(frozen=True)
class Skipped:
    origin: str
    reason: str


@dataclass
class Conversion:
    """One source read whole for one of our tenants: the records to import, and what was left
    out with its reason."""

    tenant: str
    taken: list[Taken] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    _ids: dict[str, str] = field(default_factory=dict)

    def take(
        self,
        origin: str,
        *,
        key: str,
        content: str,
        created_at: str,
        memory_type: MemoryType = "project",
        category: str | None = None,
        tags: list[str] | None = None,
    ) -> None:
        """One record; ``key`` names it within its source, so a second run makes the same id
        (the import skips what it already stored). A second record with the key is skipped."""
        record_id = stable_id(created_at, key)
        earlier = self._ids.setdefault(record_id, origin)
        if earlier != origin:
            self.skip(origin, f"the same as {earlier}")
            return
        record = ExportedMemory(
            id=record_id,
            tenant=self.tenant,
            content=content,
            created_at=created_at,
            memory_type=memory_type,
            category=category or None,
            tags=tuple(unique(tags or [])),
        )
        self.taken.append(Taken(origin, record))

    def skip(self, origin: str, reason: str) -> None:
        self.skipped.append(Skipped(origin, reason))


def stable_id(created_at: str, key: str) -> str:
    """A ULID whose time is the memory's creation and whose random part is a digest of its key
    in the source: the same source record makes the same id on every run."""
    ms = parse_iso_ms(created_at) or 0
    ms = min(max(ms, 0), MAX_ULID_TIME_MS)
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:10]
    return str(ULID.from_bytes(ms.to_bytes(6, "big") + digest))


def date_of(value: object, origin: str, field_name: str) -> str | None:
    """An ISO-8601 string or a Unix time (seconds, or milliseconds when that large) as our
    stored form; None when absent.

    Raises:
        SourceError: a value that is neither, naming ``field_name``.
    """
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        ms = int(value) if abs(value) > _MS_THRESHOLD else int(value * 1000)
        if 0 <= ms <= MAX_ULID_TIME_MS:
            return iso_ms(ms)
    elif isinstance(value, str):
        canonical = canonical_iso(value.strip())
        if canonical is not None:
            return canonical
    raise SourceError(
        origin, field_name, f"`{field_name}` {value!r} is not an ISO-8601 time or a Unix time"
    )


def file_date(path: Path) -> str:
    """A file's modification time: the date of what a source keeps without one."""
    stamp = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return iso_ms(int(stamp.timestamp() * 1000))


def unique(tags: list[str]) -> list[str]:
    """Trimmed, empty ones dropped, each once, in first-seen order."""
    seen: dict[str, None] = {}
    for tag in tags:
        if tag.strip():
            seen.setdefault(tag.strip(), None)
    return list(seen)


def name_tag(name: str) -> list[str]:
    """A name as a tag when it fits a tag (the name is in the content either way)."""
    return [name] if name.strip() and len(name.strip().encode()) <= MAX_TAG_BYTES else []


def text_field(item: dict[str, object], name: str, origin: str, *, required: bool) -> str | None:
    """A string field of a JSON object.

    Raises:
        SourceError: missing when required, or not a string.
    """
    value = item.get(name)
    if value is None:
        if required:
            raise SourceError(origin, name, f"missing the required field `{name}`")
        return None
    if not isinstance(value, str):
        raise SourceError(origin, name, f"`{name}` must be a string, not {type(value).__name__}")
    return value
