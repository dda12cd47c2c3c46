"""Does remember link a long chat's knowledge updates by text alone, and how often does it link two
messages that are no update?

    python bench/chat_updates.py [--data /work/shared/bench-data] [--random 3000] [--show]

For every knowledge-update question of the long technical chats (BEAM dev), each (original,
updated) pair of messages the question names is read by the probable-update rules
(``shared.ranking.updates``) as remember would store them (``bench._beam.fitted``), then, where
the words say no, by the restated-figure rule (``shared.ranking.figures``, with the local model:
``--words-only`` leaves it out). Then as many random pairs of messages of one chat, earlier
first: the share of those linked is an upper bound on false links (some random pairs are real
updates). Prints JSON; ``--show`` also prints the random pairs that were linked, with the rules'
evidence (or "restated figure").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._beam import fitted
from bench._data import BeamChat, load_beam
from bench._figures import restated
from shared.embedding.local import LocalEmbedder
from shared.ranking.evidence import Update
from shared.ranking.updates import linked_update

SEED = 7


class Linker:
    """The word rules, then (unless ``embedder`` is None) the restated-figure rule."""

    def __init__(self, embedder: LocalEmbedder | None) -> None:
        self.embedder = embedder

    async def link(self, new: str, old: str) -> Update | str | None:
        found = linked_update(new, old)
        if found is not None or self.embedder is None:
            return found
        return "restated figure" if (await restated(self.embedder, [(new, old)]))[0] else None


async def knowledge_updates(chats: list[BeamChat], linker: Linker) -> dict[str, int]:
    linked = pairs = 0
    for chat in chats:
        by_id = {message.id: message for message in chat.messages}
        for question in chat.questions:
            if question.kind != "knowledge_update":
                continue
            for original in question.original:
                for updated in question.updated:
                    if original in by_id and updated in by_id:
                        pairs += 1
                        newer, older = by_id[updated].stored, by_id[original].stored
                        found = await linker.link(fitted(newer), fitted(older))
                        linked += found is not None
    return {"pairs": pairs, "linked": linked}


async def random_pairs(
    chats: list[BeamChat], total: int, linker: Linker, *, show: bool
) -> dict[str, Any]:
    rng = random.Random(SEED)
    linked = pairs = 0
    for chat in chats:
        for _ in range(total // len(chats)):
            first, second = sorted(rng.sample(range(len(chat.messages)), 2))
            older, newer = chat.messages[first], chat.messages[second]
            found = await linker.link(fitted(newer.stored), fitted(older.stored))
            pairs += 1
            if found is not None:
                linked += 1
                if show:
                    print(f"chat {chat.chat}: {older.id} -> {newer.id}: {found}", file=sys.stderr)
    return {"pairs": pairs, "linked": linked, "rate": round(linked / pairs, 4) if pairs else None}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    chats = load_beam(args.data)
    embedder = None if args.words_only else await LocalEmbedder.open()
    try:
        linker = Linker(embedder)
        return {
            "knowledge_updates": await knowledge_updates(chats, linker),
            "random_pairs": await random_pairs(chats, args.random, linker, show=args.show),
        }
    finally:
        if embedder is not None:
            await embedder.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--random", type=int, default=3000, help="random pairs, all chats")
    parser.add_argument("--show", action="store_true", help="print the random pairs linked")
    parser.add_argument("--words-only", action="store_true", help="the word rules alone")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args)), indent=1))


if __name__ == "__main__":
    main()
