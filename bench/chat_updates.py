"""Does remember link a long chat's knowledge updates by text alone, and how often does it link two
messages that are no update?

    python bench/chat_updates.py [--data /work/shared/bench-data] [--random 3000] [--show]

For every knowledge-update question of the long technical chats (BEAM dev), each (original,
updated) pair of messages the question names is read by the probable-update rules
(``shared.ranking.updates``) as remember would store them (``bench._beam.fitted``). Then as many
random pairs of messages of one chat, earlier first: the share of those linked is an upper bound
on false links (some random pairs are real updates). Prints JSON; ``--show`` also prints the
random pairs that were linked, with the rules' evidence.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._beam import fitted
from bench._data import BeamChat, load_beam
from shared.ranking.updates import probable_update

SEED = 7


def knowledge_updates(chats: list[BeamChat]) -> dict[str, int]:
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
                        linked += probable_update(fitted(newer), fitted(older)) is not None
    return {"pairs": pairs, "linked": linked}


def random_pairs(chats: list[BeamChat], total: int, *, show: bool) -> dict[str, Any]:
    rng = random.Random(SEED)
    linked = pairs = 0
    for chat in chats:
        for _ in range(total // len(chats)):
            first, second = sorted(rng.sample(range(len(chat.messages)), 2))
            older, newer = chat.messages[first], chat.messages[second]
            found = probable_update(fitted(newer.stored), fitted(older.stored))
            pairs += 1
            if found is not None:
                linked += 1
                if show:
                    print(f"chat {chat.chat}: {older.id} -> {newer.id}: {found}", file=sys.stderr)
    return {"pairs": pairs, "linked": linked, "rate": round(linked / pairs, 4) if pairs else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--random", type=int, default=3000, help="random pairs, all chats")
    parser.add_argument("--show", action="store_true", help="print the random pairs linked")
    args = parser.parse_args()
    chats = load_beam(args.data)
    report = {
        "knowledge_updates": knowledge_updates(chats),
        "random_pairs": random_pairs(chats, args.random, show=args.show),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
