"""doobidoo's mcp-memory-service export (its ``MemoryExporter.export_to_json``).

One JSON object: ``{"export_metadata": {...}, "memories": [{"content", "content_hash", "tags",
"created_at", "updated_at", "memory_type", "metadata", "store"}]}``, ``created_at`` a Unix time
in seconds (``created_at_iso`` where a version wrote it).

- ``content`` is the content; ``created_at`` the created date (``updated_at`` when it is
  missing, then the export's ``export_timestamp``).
- ``tags`` (a list, or an older version's comma-separated string) are the tags, plus
  ``store:<name>`` for a store other than ``default``.
- ``memory_type`` is kept as the category; the type is ``pattern`` for pattern, ``reference``
  for reference and document, ``conversation`` for conversation and session, else ``project``.
- The id is made from ``content_hash`` (from the content when it is missing), so a memory the
  export holds twice is taken once and a second run writes nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

import msgspec

from shared.model import MemoryType
from shared.transfer.sources.common import Conversion, SourceError, date_of, text_field

TYPES: Final[dict[str, MemoryType]] = {
    "pattern": "pattern",
    "reference": "reference",
    "document": "reference",
    "conversation": "conversation",
    "session": "conversation",
}


def convert(path: Path, tenant: str) -> Conversion:
    """Raises SourceError for a file or a memory not in the exporter's shape."""
    try:
        payload = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError as error:
        raise SourceError(path.name, "file", f"not a JSON document: {error}") from error
    if not isinstance(payload, dict) or not isinstance(payload.get("memories"), list):
        raise SourceError(
            path.name, "memories", "an mcp-memory-service export has a `memories` list"
        )
    meta = payload.get("export_metadata")
    fallback = meta.get("export_timestamp") if isinstance(meta, dict) else None
    conversion = Conversion(tenant)
    for index, item in enumerate(payload["memories"]):
        origin = f"{path.name} memories[{index}]"
        if not isinstance(item, dict):
            raise SourceError(origin, "memories", "each memory must be a JSON object")
        _memory(conversion, item, origin, fallback)
    return conversion


def _memory(conversion: Conversion, item: dict[str, object], origin: str, fallback: object) -> None:
    content = text_field(item, "content", origin, required=True) or ""
    if not content.strip():
        conversion.skip(origin, "empty `content`")
        return
    created = (
        date_of(item.get("created_at"), origin, "created_at")
        or date_of(item.get("created_at_iso"), origin, "created_at_iso")
        or date_of(item.get("updated_at"), origin, "updated_at")
        or date_of(fallback, origin, "export_timestamp")
    )
    if created is None:
        raise SourceError(origin, "created_at", "missing `created_at` (and no date to use)")
    kind = text_field(item, "memory_type", origin, required=False)
    digest = text_field(item, "content_hash", origin, required=False)
    store = text_field(item, "store", origin, required=False)
    tags = _tags(item.get("tags"), origin)
    if store and store != "default":
        tags.append(f"store:{store}")
    key = digest or hashlib.sha256(content.strip().lower().encode()).hexdigest()
    conversion.take(
        origin,
        key=f"mcp-memory-service\x00{key}",
        content=content,
        created_at=created,
        memory_type=TYPES.get((kind or "").lower(), "project"),
        category=kind,
        tags=tags,
    )


def _tags(value: object, origin: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split(",")
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return list(value)
    raise SourceError(origin, "tags", "`tags` must be a list of strings")
