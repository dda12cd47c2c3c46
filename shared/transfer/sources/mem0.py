"""mem0's and OpenMemory's exports.

Read from one JSON file (or OpenMemory's backup zip, from its ``memories.json``):

- mem0's ``get_all`` answer: ``{"results": [...]}`` (or a bare list, or ``memories`` /
  ``records``), each ``{"id", "memory", "hash", "metadata", "categories", "created_at",
  "updated_at", "user_id", "agent_id", "run_id"}``;
- OpenMemory's backup ``memories.json``: ``{"memories": [{"id", "content", "state",
  "created_at", "updated_at", "category_ids", ...}], "categories": [{"id", "name"}], ...}``.

``memory`` (or ``content``) is the content; ``created_at`` the created date (``updated_at``
when missing, then the file's modification time). The first category is the category and
every category a tag, with ``agent:<id>`` and ``run:<id>`` when present. A memory whose
OpenMemory ``state`` is not ``active`` (paused, archived, deleted) is skipped, as OpenMemory
hides it. The id is made from the source's ``id``, so a second run writes nothing.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Final

import msgspec

from shared.transfer.sources.common import (
    Conversion,
    SourceError,
    date_of,
    file_date,
    text_field,
)

LISTS: Final = ("results", "memories", "records")


def convert(path: Path, tenant: str) -> Conversion:
    """Raises SourceError for a file or a memory in neither shape."""
    payload = _payload(path)
    items, names = _items(payload, path.name)
    fallback = file_date(path)
    conversion = Conversion(tenant)
    for index, item in enumerate(items):
        origin = f"{path.name} memory {index + 1}"
        if not isinstance(item, dict):
            raise SourceError(origin, "memories", "each memory must be a JSON object")
        _memory(conversion, item, origin, fallback, names)
    return conversion


def _payload(path: Path) -> object:
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                members = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "memories.json"]
                if not members:
                    raise SourceError(path.name, "file", "the zip holds no memories.json")
                raw = archive.read(members[0])
        else:
            raw = path.read_bytes()
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as error:
        raise SourceError(path.name, "file", f"not a JSON document: {error}") from error
    except zipfile.BadZipFile as error:
        raise SourceError(path.name, "file", f"not a readable zip: {error}") from error


def _items(payload: object, name: str) -> tuple[list[object], dict[str, str]]:
    """The memories, and OpenMemory's category names by id."""
    if isinstance(payload, list):
        return payload, {}
    if isinstance(payload, dict):
        for key in LISTS:
            if isinstance(payload.get(key), list):
                categories = payload.get("categories")
                names = {
                    str(c.get("id")): str(c.get("name"))
                    for c in (categories if isinstance(categories, list) else [])
                    if isinstance(c, dict) and c.get("name")
                }
                return payload[key], names
    raise SourceError(
        name, "results", "a mem0 export is a list, or an object with a `results` or `memories` list"
    )


def _memory(
    conversion: Conversion,
    item: dict[str, object],
    origin: str,
    fallback: str,
    names: dict[str, str],
) -> None:
    content = text_field(item, "memory", origin, required=False)
    if content is None:
        content = text_field(item, "content", origin, required=False)
    if content is None:
        raise SourceError(origin, "memory", "missing the required field `memory` (or `content`)")
    state = item.get("state", "active")
    if state != "active":
        conversion.skip(origin, f"its state is {state!r}: OpenMemory hides it")
        return
    if not content.strip():
        conversion.skip(origin, "empty `memory`")
        return
    created = (
        date_of(item.get("created_at"), origin, "created_at")
        or date_of(item.get("updated_at"), origin, "updated_at")
        or fallback
    )
    categories = _categories(item, origin, names)
    tags = list(categories)
    for field_name, prefix in (("agent_id", "agent"), ("run_id", "run")):
        value = item.get(field_name)
        if isinstance(value, str) and value:
            tags.append(f"{prefix}:{value}")
    source_id = item.get("id")
    key = str(source_id) if source_id not in (None, "") else content
    conversion.take(
        origin,
        key=f"mem0\x00{key}",
        content=content,
        created_at=created,
        category=categories[0] if categories else None,
        tags=tags,
    )


def _categories(item: dict[str, object], origin: str, names: dict[str, str]) -> list[str]:
    value = item.get("categories")
    if value is None:
        ids = item.get("category_ids")
        value = [names.get(str(i), "") for i in ids] if isinstance(ids, list) else []
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise SourceError(origin, "categories", "`categories` must be a list of strings")
    return [c.strip() for c in value if c.strip()]
