"""Probable updates over MCP: is a newer fact ranked above the one it updates, and is a fact
about another subject left unlinked? (``python -m bench --only updates``)

- **Everyday pairs** (``bench/data/everyday_updates.json``): each pair in a fresh tenant among
  eight other projects' facts, the older remembered first; the pair's question in a default
  recall must put the newer above the older. Its distractors (later facts that leave the
  older current, in the same file) are served the same way: not linked, and the older, which
  their question asks for, above the newer.
- **Chat revisions** (``bench/data/chat_revisions.json``): the same for chat messages of
  software projects and a mathematics course (a user asking an assistant, code included) that
  give a figure anew in other words, and later messages that give the same measure of another
  thing, a goal or another time.
- **Generated pairs** (``bench/supersede_pairs.py``), short and long (each fact inside a
  paragraph of unrelated sentences): the same for every update; for every same-pattern
  distractor, whether remember linked it (a false link) and whether the older stays above.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from bench._client import call_text, ids_in, parse_recall, session
from bench._server import ApiServer
from bench.supersede_pairs import Pair, generate

EVERYDAY_FILE: Final = Path(__file__).resolve().parent / "data" / "everyday_updates.json"
CHAT_FILE: Final = Path(__file__).resolve().parent / "data" / "chat_revisions.json"
FILLERS_PER_TENANT: Final = 8
SMOKE_PAIRS: Final = 6


def everyday_pairs(path: Path = EVERYDAY_FILE) -> list[Pair]:
    """The updates: each a subject of its own."""
    return _everyday(path, "pairs", kind="update")


def everyday_distractors(path: Path = EVERYDAY_FILE) -> list[Pair]:
    """Later facts that leave the older one current (another subject in the same words,
    another attribute, an addition, a plan), whose question asks for the older fact."""
    return _everyday(path, "distractors", kind="everyday_distractor")


def _everyday(path: Path, key: str, *, kind: str) -> list[Pair]:
    raw = json.loads(path.read_text()).get(key, [])
    return [
        Pair(kind=kind, slot=f"{kind}-{n}", older=p["old"], newer=p["new"], query=p["query"])
        for n, p in enumerate(raw)
    ]


def newer_first(ids: Sequence[str], newer: str, older: str) -> bool:
    """The newer is returned, and above the older when both are."""
    if newer not in ids:
        return False
    return older not in ids or ids.index(newer) < ids.index(older)


def older_first(ids: Sequence[str], newer: str, older: str) -> bool:
    """For a distractor, whose question asks for the older fact: it is returned, and above the
    newer when both are."""
    return older in ids and (newer not in ids or ids.index(older) < ids.index(newer))


async def _one_pair(url: str, tenant: str, pair: Pair, fillers: Sequence[str]) -> dict[str, Any]:
    async with session(url, tenant) as client:
        for text in fillers:
            await call_text(client, "remember", {"content": text})
        older = ids_in(await call_text(client, "remember", {"content": pair.older}))[0]
        answer = await call_text(client, "remember", {"content": pair.newer})
        newer = ids_in(answer)[0]
        row: dict[str, Any] = {"kind": pair.kind, "linked": f"probably updates {older}" in answer}
        recalled = parse_recall(await call_text(client, "recall", {"query": pair.query}))
        if pair.kind == "update":
            row["newer_first"] = newer_first(recalled.ids, newer, older)
            if not row["newer_first"]:
                row["miss"] = {"older": pair.older, "newer": pair.newer, "query": pair.query}
        else:
            row["older_first"] = older_first(recalled.ids, newer, older)
        return row


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = Counter(r["kind"] for r in rows)
    linked = Counter(r["kind"] for r in rows if r["linked"])
    updates = [r for r in rows if r["kind"] == "update"]
    distractors = sum(n for kind, n in kinds.items() if kind != "update")
    false_links = sum(n for kind, n in linked.items() if kind != "update")
    return {
        "updates": len(updates),
        "newer_first": sum(r["newer_first"] for r in updates),
        "newer_first_rate": round(sum(r["newer_first"] for r in updates) / len(updates), 3)
        if updates
        else None,
        "linked": linked["update"],
        "distractors": distractors,
        # An addition states both values, so either order answers its question.
        "older_first": sum(r.get("older_first", False) for r in rows),
        "false_links": false_links,
        "false_link_rate": round(false_links / distractors, 4) if distractors else None,
        "misses": [r["miss"] for r in updates if "miss" in r],
        "by_kind": {
            kind: {"pairs": n, "linked": linked[kind]} for kind, n in sorted(kinds.items())
        },
    }


async def _run_set(
    server: ApiServer, name: str, pairs: list[Pair], fillers: int, log: Callable[[str], None]
) -> dict[str, Any]:
    log(f"updates: {name}, {len(pairs)} pairs, one tenant each")
    rows = []
    for n, pair in enumerate(pairs):
        # Other pairs' older facts of other kinds of value: a fact of the same kind may be about
        # the same subject (another version of the same fact), which would blur what is measured.
        around = [p.older for p in pairs[n + 1 :] + pairs[:n] if p.slot != pair.slot]
        tenant = f"upd-{name.replace(' ', '-')}-{n}"
        rows.append(await _one_pair(server.url, tenant, pair, around[:fillers]))
    return _summary(rows)


async def run_updates(
    server: ApiServer, *, smoke: bool, log: Callable[[str], None]
) -> dict[str, Any]:
    per_slot, cap, fillers = (1, SMOKE_PAIRS, 2) if smoke else (8, None, FILLERS_PER_TENANT)
    # Each set with its fillers; the everyday pairs also alone, as a user tries a fresh
    # project: with two memories the keyword leg's spread is read over two scores.
    sets = {
        "everyday": (everyday_pairs(), fillers),
        "everyday alone": (everyday_pairs(), 0),
        "everyday distractors": (everyday_distractors(), fillers),
        "chat revisions": (everyday_pairs(CHAT_FILE), fillers),
        "chat distractors": (everyday_distractors(CHAT_FILE), fillers),
        "short": (generate(per_slot=per_slot), fillers),
        "long": (generate(per_slot=per_slot, long=True), fillers),
    }
    return {
        name: await _run_set(server, name, pairs[:cap], around, log)
        for name, (pairs, around) in sets.items()
    }
