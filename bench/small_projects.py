"""Plain paraphrases in small projects: what recall answers when a project holds 5 or 10
memories instead of the calibration sets' 30.

    python bench/small_projects.py [--data /work/shared/bench-data] [--draws 20]

Each answered question of Harbor (bench/calibration_set.json) and DevBench is asked of random
projects of 5 and 10 memories that hold its answer, and each question about nothing stored of
random projects of the same sizes (``--draws`` projects per question, seeded), through recall's
own fusion and ranking (``bench/ablation.py``'s tenant) at the balanced default. Printed: the
answers returned, the questions about nothing stored answered "nothing", and HIGH on those;
then, for each line below the floor, what recall would answer if "is anything stored" were
read at that line instead (on the best relevance before the feedback, or the keyword gate, as
now): a missed answer comes back when its own relevance reaches the line (it is then the best
of its project, so nothing cuts it), and a question about nothing stored gets an answer when
its best relevance does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_devbench
from bench.ablation import BASE_MS, FLOOR, HARBOR, Tenant, Vector, embedded, ranked
from shared.embedding.local import LocalEmbedder
from shared.lexical import LexicalIndex
from shared.lexical.segments import passage_counts
from shared.model import Memory, iso_ms
from shared.ranking import Candidate, query_names_held

SIZES: Final = (5, 10, 30)
LIMIT: Final = 5
# Where a line for "is anything stored" is read off (the floor, and below it).
LINES: Final = (FLOOR, 0.28, 0.26, 0.24)


@dataclass
class Set:
    name: str
    texts: dict[str, str]
    answered: list[tuple[str, set[str]]]
    not_stored: list[str]


@dataclass
class Tally:
    asked: int = 0
    returned: int = 0
    not_stored: int = 0
    nothing: int = 0
    high: int = 0
    # Per question about nothing stored the keyword gate did not answer: its best relevance
    # before the feedback.
    best_not_stored: list[float] = field(default_factory=list)
    # Per answered question that came back empty: its answer's own relevance.
    missed: Counter[tuple[str, float]] = field(default_factory=Counter)


def sets(data: Path) -> list[Set]:
    raw = json.loads(HARBOR.read_text())
    dev = load_devbench(data)
    return [
        Set(
            "Harbor",
            raw["memories"],
            [(q, set(a)) for q, a in raw["answered"]],
            raw["not_stored"],
        ),
        Set(
            "DevBench",
            {m.id: m.content for m in dev.memories},
            [(q.question, set(q.expected)) for q in dev.queries if q.expected],
            [q.question for q in dev.queries if not q.expected],
        ),
    ]


def tenant(chosen: list[str], texts: dict[str, str], vectors: dict[str, Vector]) -> Tenant:
    memories = [
        Memory(id=i, tenant="t", content=texts[i], created_at=iso_ms(BASE_MS + k * 1000))
        for k, i in enumerate(chosen)
    ]
    index = LexicalIndex()
    for m in memories:
        index.add(m.id, passage_counts(m.content))
    return Tenant(memories, np.stack([vectors[i] for i in chosen]), index)


async def measure(one: Set, size: int, draws: int, embedder: LocalEmbedder) -> Tally:
    ids = list(one.texts)
    rows = await embedded(embedder, [one.texts[i] for i in ids], one.name.lower())
    vectors = dict(zip(ids, rows, strict=True))
    asked = [q for q, _ in one.answered] + one.not_stored
    queries = dict(zip(asked, await embedded(embedder, asked, f"{one.name}-small-q"), strict=True))
    rng = random.Random(7)
    tally = Tally()
    rounds = draws if size < len(ids) else 1
    for _ in range(rounds):
        for question, answers in one.answered:
            others = [i for i in ids if i not in answers]
            chosen = [*answers, *rng.sample(others, size - len(answers))]
            _, candidates, absent = tenant(chosen, one.texts, vectors).candidates(
                question, queries[question], limit=LIMIT
            )
            outcome = ranked(candidates, "balanced", LIMIT, names_absent=absent)
            tally.asked += 1
            if answers & {r.memory.id for r in outcome.results}:
                tally.returned += 1
            else:
                own = max(c.own_relevance for c in candidates if c.memory_id in answers)
                tally.missed[(question, round(own, 3))] += 1
        for question in one.not_stored:
            chosen = rng.sample(ids, size)
            _, candidates, absent = tenant(chosen, one.texts, vectors).candidates(
                question, queries[question], limit=LIMIT
            )
            outcome = ranked(candidates, "balanced", LIMIT, names_absent=absent)
            tally.not_stored += 1
            tally.nothing += not outcome.results
            tally.high += outcome.confidence == "high"
            if not any(c.keyword is not None and names_or_rare(c) for c in candidates):
                tally.best_not_stored.append(max(c.own_relevance for c in candidates))
    return tally


def names_or_rare(candidate: Candidate) -> bool:
    keyword = candidate.keyword
    return keyword is not None and (keyword.all_rare or query_names_held(candidate) > 0)


def report(measured: list[tuple[str, int, Tally]]) -> str:
    lines = [
        "| set | memories | line | answer returned | nothing stored: answered nothing | HIGH |",
        "|---|---|---|---|---|---|",
    ]
    for name, size, t in measured:
        for line in LINES:
            returned = t.returned + sum(n for (_, own), n in t.missed.items() if own >= line)
            nothing = sum(best < line for best in t.best_not_stored)
            high = str(t.high) if line == FLOOR else "–"
            lines.append(
                f"| {name} | {size} | {line:.2f} | {returned}/{t.asked} | "
                f"{nothing}/{t.not_stored} | {high} |"
            )
    lines += ["", "Answers not returned (their own relevance; how many draws):"]
    for name, size, t in measured:
        for (question, own), count in sorted(t.missed.items()):
            lines.append(f"- {name} {size}: {question!r} at {own} ({count})")
    return "\n".join(lines)


async def run(data: Path, draws: int) -> list[tuple[str, int, Tally]]:
    embedder = await LocalEmbedder.open()
    try:
        return [
            (one.name, size, await measure(one, size, draws, embedder))
            for one in sets(data)
            for size in SIZES
        ]
    finally:
        await embedder.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--draws", type=int, default=20)
    args = parser.parse_args()
    print(report(asyncio.run(run(args.data, args.draws))))


if __name__ == "__main__":
    main()
