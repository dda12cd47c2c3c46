"""Long chats remembered in order with links on, then recalled: what remember's links do to recall.

    python bench/chat_links.py [--data /work/shared/bench-data] [--cosine 0.8]

Every BEAM dev message is remembered in process, in order, one tenant per chat (the real
``remember``: dedup, five neighbours, the word rules and the restated-figure rule), then every
question with evidence is recalled (balanced 5, exploratory 10) and each knowledge update's
place against its original is read (balanced, limit 100). ``--cosine`` sets the restated-figure
rule's threshold (``shared.ranking.figures.RESTATED_COSINE``) for the run. Prints JSON: R@5,
R@10, updates above their original, and how many links the figure rule made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import shared.ranking.figures as figures
from bench._beam import fitted
from bench._data import BeamChat, load_beam
from bench._inproc import Local, open_local
from shared.model import Draft
from shared.operations.recall import recall
from shared.operations.remember import remember
from shared.ranking import RecallMode
from shared.ranking.updates import probable_update


async def _stored(
    local: Local, tenant: str, chat: BeamChat, tally: dict[str, Any]
) -> dict[int, str]:
    """Remember every message; message id -> memory id."""
    to_id: dict[int, str] = {}
    for message in chat.messages:
        text = fitted(message.stored)
        answer = await remember(local.ops, tenant, None, Draft(content=text))
        to_id[message.id] = answer.memory.id
        if answer.supersedes is not None:
            tally["links"] += 1
            tally["by_figures"] += probable_update(text, answer.supersedes.content) is None
    return to_id


async def _returned(
    local: Local, tenant: str, query: str, mode: RecallMode, limit: int
) -> list[str]:
    answer = await recall(
        local.ops,
        tenant,
        None,
        query=query,
        mode=mode,
        limit=limit,
        count_use=False,
    )
    return [r.memory.id for r in answer.outcome.results] if answer.outcome else []


async def _asked(
    local: Local, chat: BeamChat, to_id: dict[int, str], tally: dict[str, Any]
) -> None:
    tenant = f"beam-{chat.chat}"
    for question in chat.questions:
        evidence = {to_id[i] for i in question.evidence if i in to_id}
        if evidence:
            asks: tuple[tuple[str, RecallMode, int], ...] = (
                ("r5", "balanced", 5),
                ("r10", "exploratory", 10),
            )
            for key, mode, limit in asks:
                found = set(await _returned(local, tenant, question.text, mode, limit))
                tally[key].append(len(evidence & found) / len(evidence))
        new = {to_id[i] for i in question.updated if i in to_id}
        old = {to_id[i] for i in question.original if i in to_id}
        if new and old:
            order = await _returned(local, tenant, question.text, "balanced", 100)
            place = {m: i for i, m in reversed(list(enumerate(order)))}
            tally["updates"] += 1
            far = len(order) + 1
            tally["updates_first"] += min(place.get(m, far) for m in new) < min(
                place.get(m, far) for m in old
            )


async def measure(data: Path) -> dict[str, Any]:
    tally: dict[str, Any] = {"r5": [], "r10": [], "updates": 0, "updates_first": 0}
    tally |= {"links": 0, "by_figures": 0}
    with tempfile.TemporaryDirectory() as folder:
        async with open_local(Path(folder)) as local:
            for chat in load_beam(data):
                to_id = await _stored(local, f"beam-{chat.chat}", chat, tally)
                await _asked(local, chat, to_id, tally)
    for key in ("r5", "r10"):
        tally[key] = round(sum(tally[key]) / len(tally[key]), 4) if tally[key] else None
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--cosine", type=float, default=figures.RESTATED_COSINE)
    args = parser.parse_args()
    figures.RESTATED_COSINE = args.cosine  # type: ignore[misc]
    print(json.dumps(asyncio.run(measure(args.data)), indent=1))


if __name__ == "__main__":
    main()
