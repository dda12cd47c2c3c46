"""The front matter basic-memory writes: ``key: value`` lines between ``---`` fences, a list
either ``[a, b]`` or ``- item`` lines below its key. Only that much YAML: the notes are the
user's own Markdown, and a key this reader cannot follow is left out, never guessed."""

from __future__ import annotations

FENCE = "---"


def split(text: str) -> tuple[dict[str, str | list[str]], str]:
    """The front matter's keys and the body after it (the whole text when there is none)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FENCE:
        return {}, text
    try:
        end = next(n for n in range(1, len(lines)) if lines[n].strip() == FENCE)
    except StopIteration:
        return {}, text
    return _keys(lines[1:end]), "\n".join(lines[end + 1 :])


def _keys(lines: list[str]) -> dict[str, str | list[str]]:
    keys: dict[str, str | list[str]] = {}
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("- ") and current is not None:
            held = keys.get(current)
            keys[current] = [*(held if isinstance(held, list) else []), _scalar(stripped[2:])]
            continue
        if line[:1].isspace() or ":" not in line:
            continue  # a nested mapping or a continued string: not read
        key, _, value = line.partition(":")
        current = key.strip()
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            keys[current] = [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            keys[current] = _scalar(value)
        else:
            keys[current] = []
    return keys


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
