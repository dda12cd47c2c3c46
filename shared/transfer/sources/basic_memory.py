"""A basic-memory folder: Markdown notes with front matter (``title``, ``type``, ``tags``).

- Each observation line ``- [category] text #tag (context)`` becomes a memory "<title>: text
  (context)", category the bracketed category, tags its ``#tags`` and the note's tags.
- Each relation line ``- relation_type [[Target]]`` becomes a memory "<title> <relation type>
  <Target>", category ``relation``, the note's title and the target as tags (as the reference
  server's relations: recall finds them by their words).
- The rest of the note's text (headings aside) becomes one ``reference`` memory "<title>:
  text", category the note's ``type``, when there is any.
- A note's date is its front matter ``created`` (or ``date``), else the file's modification
  time. Files other than ``*.md`` and hidden folders are left out; a note with nothing to take
  is skipped. Ids are made from the note's path and the line's text: a second run writes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from shared.transfer.sources import frontmatter
from shared.transfer.sources.common import (
    Conversion,
    SourceError,
    date_of,
    file_date,
    name_tag,
)

OBSERVATION: Final = re.compile(r"^\s*[-*]\s+\[([^\]]+)\]\s+(.+?)\s*$")
# As basic-memory reads one: a type of one word, or quoted when it has spaces; then the target
# and an optional (context), nothing more (a line with prose around a [[link]] is text).
RELATION: Final = re.compile(
    r"""^\s*[-*]\s+(?:"([^"]+)"|'([^']+)'|([^\s\["']\S*))\s+\[\[([^\]]+)\]\]\s*(\([^()]*\))?\s*$"""
)
HASHTAG: Final = re.compile(r"(?:^|\s)#([\w/-]+)")
HEADING: Final = re.compile(r"^\s*#{1,6}\s")


def convert(folder: Path, tenant: str) -> Conversion:
    """Raises SourceError for a note that is not UTF-8 or has a bad date."""
    conversion = Conversion(tenant)
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or path.is_dir():
            continue
        if not path.is_file():
            conversion.skip(str(relative), "not a regular file (a broken link?)")
            continue
        if path.suffix.lower() != ".md":
            conversion.skip(str(relative), "not a Markdown (.md) file")
            continue
        _note(conversion, path, relative.as_posix())
    return conversion


@dataclass(frozen=True)
class _Note:
    """What every memory of one note shares."""

    origin: str
    title: str
    created: str
    tags: list[str]


def _note(conversion: Conversion, path: Path, origin: str) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise SourceError(origin, "file", f"not valid UTF-8 ({error.reason})") from error
    except OSError as error:
        raise SourceError(origin, "file", f"cannot be read: {error.strerror}") from error
    keys, body = frontmatter.split(text)
    raw_tags = keys.get("tags", [])
    listed = raw_tags if isinstance(raw_tags, list) else raw_tags.split(",")
    note = _Note(
        origin=origin,
        title=_string(keys.get("title")) or path.stem,
        created=date_of(keys.get("created") or keys.get("date"), origin, "created")
        or file_date(path),
        tags=[t.strip().lstrip("#") for t in listed],
    )
    before = len(conversion.taken)
    prose: list[str] = []
    for number, line in enumerate(body.splitlines(), start=1):
        taken = _structured(conversion, note, f"{origin} body line {number}", line)
        if not taken and line.strip() and not HEADING.match(line):
            prose.append(line.rstrip())
    if prose:
        conversion.take(
            f"{origin} text",
            created_at=note.created,
            key=f"basic-memory\x00{origin}\x00text",
            content=f"{note.title}: " + "\n".join(prose),
            memory_type="reference",
            category=_string(keys.get("type")),
            tags=note.tags,
        )
    if len(conversion.taken) == before:
        conversion.skip(origin, "no observations, relations or text")


def _structured(conversion: Conversion, note: _Note, place: str, line: str) -> bool:
    """An observation or a relation line taken as a memory; False for any other line."""
    if match := OBSERVATION.match(line):
        category, rest = match.group(1).strip(), match.group(2)
        key = f"basic-memory\x00{note.origin}\x00{category}\x00{rest}"
        content = f"{note.title}: " + (" ".join(HASHTAG.sub(" ", rest).split()) or rest)
        tags = HASHTAG.findall(rest) + note.tags
    elif match := RELATION.match(line):
        relation = next(g for g in match.group(1, 2, 3) if g is not None).strip()
        target, context = match.group(4).strip(), match.group(5)
        key = f"basic-memory\x00{note.origin}\x00{relation}\x00{target}"
        content = f"{note.title} {relation.replace('_', ' ')} {target}"
        content += f" {context}" if context else ""
        category, tags = "relation", name_tag(note.title) + name_tag(target)
    else:
        return False
    conversion.take(
        place,
        created_at=note.created,
        key=key,
        content=content,
        category=category,
        tags=tags,
    )
    return True


def _string(value: str | list[str] | None) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
