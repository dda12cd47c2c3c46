"""The fusion sweep behind recall's choice of method: every method on the same candidates.

    python bench/sweep_fusion.py [--data /work/shared/bench-data]

Embeds LoCoMo (all 10 conversations, each turn as "speaker: text"), the long technical notes of
bench/data/ and devbench with the local model, indexes each with the keyword leg's own tokeniser
and BM25 (shared.lexical), and ranks every question's candidates — the vector's nearest 100 and
the keyword leg's best 100, as recall gathers them — by each fusion method. No gates, no
tie-break: this compares orders. Prints Markdown (R@5 / R@10; devbench: hit@1 / hit@5).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_devbench, load_locomo, load_tech_notes
from shared.embedding.local import LocalEmbedder
from shared.lexical import KeywordQuery, KeywordResult, LexicalIndex, terms
from shared.lexical.segments import passage_counts
from shared.operations.fusion import KEYWORD_WEIGHT

CANDIDATES = 100
FLOOR = 0.3  # the local model's; z-score fusion is expressed in units of it
BATCH = 64
Vector = npt.NDArray[np.float32]


@dataclass
class Question:
    text: str
    answers: set[int]  # document positions


@dataclass
class Corpus:
    name: str
    documents: list[str]
    questions: list[Question]
    metric: str  # "recall" (share of answers found) or "hit" (any answer found)


# A method maps (cosines of the vector candidates, keyword result) to an order of positions.
Method = Callable[[dict[int, float], KeywordResult, float], list[int]]


def by_score(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=scores.__getitem__, reverse=True)


def plain_cosine(cosine: dict[int, float], keyword: KeywordResult, bound: float) -> list[int]:
    return by_score(cosine)


def bm25_alone(cosine: dict[int, float], keyword: KeywordResult, bound: float) -> list[int]:
    return by_score({int(h.memory_id): h.score for h in keyword.hits})


def rrf(k: int) -> Method:
    def method(cosine: dict[int, float], keyword: KeywordResult, bound: float) -> list[int]:
        scores: dict[int, float] = {}
        for rank, position in enumerate(by_score(cosine)):
            scores[position] = 1 / (k + 1 + rank)
        best = sorted(keyword.hits, key=lambda h: h.score, reverse=True)[:CANDIDATES]
        for rank, hit in enumerate(best):
            position = int(hit.memory_id)
            scores[position] = scores.get(position, 0.0) + 1 / (k + 1 + rank)
        return by_score(scores)

    return method


def min_max(weight: float) -> Method:
    def method(cosine: dict[int, float], keyword: KeywordResult, bound: float) -> list[int]:
        bm25 = {int(h.memory_id): h.score for h in keyword.hits}
        everyone = set(cosine) | set(bm25)
        cos = {p: cosine.get(p, bound) for p in everyone}
        low, high = min(cos.values()), max(cos.values())
        top = max(bm25.values(), default=0.0) or 1.0
        return by_score(
            {
                p: (1 - weight) * (cos[p] - low) / ((high - low) or 1.0)
                + weight * bm25.get(p, 0.0) / top
                for p in everyone
            }
        )

    return method


def z_score(weight: float) -> Method:
    """recall's method: cosine + weight x floor x BM25 / spread over the whole tenant."""

    def method(cosine: dict[int, float], keyword: KeywordResult, bound: float) -> list[int]:
        scale = weight * FLOOR / keyword.spread if keyword.spread else 0.0
        scores = dict(cosine)
        for hit in keyword.hits:
            position = int(hit.memory_id)
            scores[position] = scores.get(position, bound) + scale * hit.score
        return by_score(scores)

    return method


METHODS: dict[str, Method] = {
    "plain cosine": plain_cosine,
    "BM25 alone": bm25_alone,
    "RRF k = 1": rrf(1),
    "RRF k = 10": rrf(10),
    "RRF k = 60": rrf(60),
    "min-max 50/50": min_max(0.5),
    "min-max, BM25 weight 0.3": min_max(0.3),
    "z-score, weight 0.06": z_score(0.06),
    "z-score, weight 0.09": z_score(0.09),
    f"z-score, weight {KEYWORD_WEIGHT} (recall)": z_score(KEYWORD_WEIGHT),
    "z-score, weight 0.16": z_score(0.16),
    "z-score, weight 0.25": z_score(0.25),
}


def corpora(data: Path, *, notes: int | None = None) -> list[Corpus]:
    found = []
    for conversation in load_locomo(data):
        position = {t.dia_id: i for i, t in enumerate(conversation.turns)}
        found.append(
            Corpus(
                f"LoCoMo {conversation.sample_id}",
                [t.content for t in conversation.turns],
                [
                    Question(q.text, {position[t] for t in q.evidence.turns})
                    for q in conversation.questions
                    if q.evidence.turns
                ],
                "recall",
            )
        )
    tech = load_tech_notes()
    if notes is not None:
        tech = tech.first(notes)
    order = {note_id: i for i, note_id in enumerate(tech.notes)}
    for hard in (False, True):
        found.append(
            Corpus(
                "technical notes, hard questions" if hard else "technical notes",
                list(tech.notes.values()),
                [
                    Question(q.text, {order[a] for a in q.answers})
                    for q in tech.questions
                    if q.hard is hard
                ],
                "recall",
            )
        )
    dev = load_devbench(data)
    position = {m.id: i for i, m in enumerate(dev.memories)}
    found.append(
        Corpus(
            "devbench",
            [m.content for m in dev.memories],
            [
                Question(q.question, {position[e] for e in q.expected})
                for q in dev.queries
                if q.expected
            ],
            "hit",
        )
    )
    return found


async def embedded(embedder: LocalEmbedder, texts: Sequence[str]) -> Vector:
    vectors: list[list[float]] = []
    for start in range(0, len(texts), BATCH):
        vectors += await embedder.embed_many(texts[start : start + BATCH])
    return np.asarray(vectors, dtype=np.float32)


async def measure(
    data: Path, *, notes: int | None = None
) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """Per family of corpora, per method, each question's (score at 1 or 5, score at 5 or 10)."""
    embedder = await LocalEmbedder.open()
    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    try:
        for corpus in corpora(data, notes=notes):
            family = "LoCoMo (all 10)" if corpus.name.startswith("LoCoMo") else corpus.name
            docs = await embedded(embedder, corpus.documents)
            questions = await embedded(embedder, [q.text for q in corpus.questions])
            index = LexicalIndex()
            for position, text in enumerate(corpus.documents):
                index.add(str(position), passage_counts(text))
            ks = (1, 5) if corpus.metric == "hit" else (5, 10)
            rows = results.setdefault(family, {name: [] for name in METHODS})
            for question, vector in zip(corpus.questions, questions, strict=True):
                similarity = docs @ vector
                nearest = np.argsort(-similarity)[:CANDIDATES]
                cosine = {int(p): float(similarity[p]) for p in nearest}
                keyword = KeywordQuery(index, terms(question.text)).result(
                    top_k=CANDIDATES, include=[str(p) for p in nearest]
                )
                bound = float(similarity[nearest].min())
                for name, method in METHODS.items():
                    order = method(cosine, keyword, bound)
                    low, high = (_score(order, question.answers, k, corpus) for k in ks)
                    rows[name].append((low, high))
    finally:
        await embedder.close()
    return results


def _score(order: list[int], answers: set[int], k: int, corpus: Corpus) -> float:
    found = len(set(order[:k]) & answers)
    if corpus.metric == "hit":
        return float(found > 0)
    return found / len(answers)


def summary(results: dict[str, dict[str, list[tuple[float, float]]]]) -> dict[str, Any]:
    """The sweep as the benchmark page stores it: per method, per family, the two means."""
    families = {
        f"{f} ({'hit@1 / hit@5' if f == 'devbench' else 'R@5 / R@10'})": len(
            next(iter(rows.values()))
        )
        for f, rows in results.items()
    }
    methods = {
        name: [
            [
                round(math.fsum(r[i] for r in results[f][name]) / len(results[f][name]), 4)
                for i in (0, 1)
            ]
            for f in results
        ]
        for name in METHODS
    }
    return {"families": families, "methods": methods}


def report(results: dict[str, dict[str, list[tuple[float, float]]]]) -> list[str]:
    families = list(results)
    heads = [f"{f} {'hit@1 / hit@5' if f == 'devbench' else 'R@5 / R@10'}" for f in families]
    lines = ["| method | " + " | ".join(heads) + " |", "|---|" + "---|" * len(families)]
    for name in METHODS:
        cells = []
        for family in families:
            rows = results[family][name]
            first = math.fsum(r[0] for r in rows) / len(rows)
            second = math.fsum(r[1] for r in rows) / len(rows)
            cells.append(f"{first:.3f} / {second:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    counts = ", ".join(
        f"{family} {len(next(iter(results[family].values())))}" for family in families
    )
    return [*lines, "", f"Questions: {counts}."]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    args = parser.parse_args()
    print("\n".join(report(asyncio.run(measure(args.data)))))


if __name__ == "__main__":
    main()
