"""The reference MCP memory server's ``memory.jsonl`` (``@modelcontextprotocol/server-memory``).

A knowledge graph, one JSON object a line: ``{"type": "entity", "name", "entityType",
"observations": [...]}`` and ``{"type": "relation", "from", "to", "relationType"}``.

- Each observation becomes one memory, "<entity>: <observation>", category the entity type and
  the entity's name a tag: an observation is one fact, which is what recall ranks and what an
  update replaces; an entity's observations in one memory would be recalled all or none.
- Each relation becomes a memory too, "<from> <relation type> <to>" (underscores read as spaces),
  category ``relation``, both names tags. A relation is a fact that recall should find by its
  words ("who works at Acme"); as a tag it would only filter, and a well-connected entity would
  pass the tag limit.
- An entity without observations is skipped (its relations are still taken).
- The file keeps no dates: every memory is dated by the file's modification time. The same
  file imports again as nothing new; a file changed since is dated anew, and its facts are
  taken again under new ids.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from shared.transfer.sources.common import (
    Conversion,
    SourceError,
    file_date,
    name_tag,
    text_field,
)


def convert(path: Path, tenant: str) -> Conversion:
    """Raises SourceError for a line that is not an entity or relation object."""
    conversion = Conversion(tenant)
    created = file_date(path)
    with path.open(encoding="utf-8", errors="surrogateescape") as source:
        for number, text in enumerate(source, start=1):
            if not text.strip():
                continue
            origin = f"{path.name} line {number}"
            item = _object(text, origin)
            kind = item.get("type")
            if kind == "entity":
                _entity(conversion, item, origin, created)
            elif kind == "relation":
                _relation(conversion, item, origin, created)
            else:
                raise SourceError(
                    origin, "type", f'`type` must be "entity" or "relation", not {kind!r}'
                )
    return conversion


def _object(text: str, origin: str) -> dict[str, object]:
    try:
        item = msgspec.json.decode(text.encode("utf-8", "surrogateescape"))
    except msgspec.DecodeError as error:
        raise SourceError(origin, "line", f"not a JSON object: {error}") from error
    if not isinstance(item, dict):
        raise SourceError(origin, "line", "not a JSON object")
    return item


def _entity(conversion: Conversion, item: dict[str, object], origin: str, created: str) -> None:
    name = text_field(item, "name", origin, required=True) or ""
    kind = text_field(item, "entityType", origin, required=True)
    observations = item.get("observations", [])
    if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
        raise SourceError(origin, "observations", "`observations` must be a list of strings")
    if not [o for o in observations if o.strip()]:
        conversion.skip(origin, f"entity {name!r} has no observations")
        return
    for index, observation in enumerate(observations):
        place = f"{origin} observation {index + 1}"
        if not observation.strip():
            conversion.skip(place, "an empty observation")
            continue
        conversion.take(
            place,
            key=f"server-memory\x00entity\x00{name}\x00{observation}",
            content=f"{name}: {observation}",
            created_at=created,
            category=kind,
            tags=name_tag(name),
        )


def _relation(conversion: Conversion, item: dict[str, object], origin: str, created: str) -> None:
    start = text_field(item, "from", origin, required=True) or ""
    end = text_field(item, "to", origin, required=True) or ""
    relation = text_field(item, "relationType", origin, required=True) or ""
    conversion.take(
        origin,
        key=f"server-memory\x00relation\x00{start}\x00{relation}\x00{end}",
        content=f"{start} {relation.replace('_', ' ')} {end}",
        created_at=created,
        category="relation",
        tags=name_tag(start) + name_tag(end),
    )
