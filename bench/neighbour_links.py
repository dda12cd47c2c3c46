"""How many pairs the probable-update rules link as remember links them (texts read whole only),
by the words alone, among texts that are no revision of each other (mostly) and among facts
where some are: what a change to the rules does to their false links.

    python bench/neighbour_links.py [--data /work/shared/bench-data] [--show FILE]

- **Chat neighbours**: every LoCoMo turn (as stored, "speaker: text") against the 40 turns
  before it, and every BEAM dev message (as remember stores it, ``bench._beam.fitted``) against
  the 12 before it. Chat turns seldom revise one another: nearly every link here is a false one.
- **Dense facts**: every pair of the facts ``bench/fact_sequence.py`` remembers in order, on
  both of its vocabularies, older against newer: a link is right where the two are versions of
  one (subject, relation), false elsewhere.

Prints JSON; ``--show FILE`` also writes every linked pair to FILE (JSON), to compare two trees
pair by pair. About two minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._beam import fitted
from bench._data import load_beam, load_locomo
from bench.fact_sequence import FACTS_FILE, sequence
from shared.ranking.updates import UpdateCheck

LOCOMO_REACH = 40
BEAM_REACH = 12
EVERYDAY_FACTS = Path(__file__).resolve().parent / "data" / "fact_sequence_everyday.json"
# fact_sequence.py's own defaults, so that the pairs are those it remembers.
SUBJECTS = 36
SEED = 7


def neighbour_links(texts: Sequence[str], reach: int) -> tuple[int, list[tuple[str, str]]]:
    """Each text against the ``reach`` before it: the pairs read, and those linked."""
    pairs, linked = 0, []
    for n, newer in enumerate(texts):
        check = UpdateCheck(newer)
        for older in texts[max(0, n - reach) : n]:
            pairs += 1
            if check.of(older, long_texts=False) is not None:
                linked.append((older, newer))
    return pairs, linked


def dense_links(facts_file: Path) -> dict[str, Any]:
    facts, _ = sequence(SUBJECTS, SEED, facts_file)
    pairs, right, false = 0, 0, []
    for n, newer in enumerate(facts):
        check = UpdateCheck(newer.text)
        for older in facts[:n]:
            pairs += 1
            if check.of(older.text, long_texts=False) is None:
                continue
            if (older.subject, older.relation.name) == (newer.subject, newer.relation.name):
                right += 1
            else:
                false.append((older.text, newer.text))
    return {"pairs": pairs, "right": right, "false": len(false), "false_pairs": false}


def measure(data: Path) -> dict[str, Any]:
    turns = [[turn.content for turn in c.turns] for c in load_locomo(data)]
    messages = [[fitted(m.stored) for m in chat.messages] for chat in load_beam(data)]
    result: dict[str, Any] = {}
    for name, chats, reach in (
        ("locomo", turns, LOCOMO_REACH),
        ("beam", messages, BEAM_REACH),
    ):
        pairs, linked = 0, []
        for texts in chats:
            read, found = neighbour_links(texts, reach)
            pairs += read
            linked += found
        result[name] = {
            "reach": reach,
            "pairs": pairs,
            "linked": len(linked),
            "linked_pairs": linked,
        }
    result["dense"] = {
        "generated": dense_links(FACTS_FILE),
        "everyday": dense_links(EVERYDAY_FACTS),
    }
    return result


def _counts(result: dict[str, Any]) -> dict[str, Any]:
    """The result without the pairs themselves."""
    return {
        key: _counts(value) if isinstance(value, dict) else value
        for key, value in result.items()
        if not key.endswith("_pairs")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--show", type=Path, default=None, help="write every linked pair here")
    args = parser.parse_args()
    result = measure(args.data)
    if args.show is not None:
        args.show.write_text(json.dumps(result, indent=1))
    print(json.dumps(_counts(result), indent=1))


if __name__ == "__main__":
    main()
