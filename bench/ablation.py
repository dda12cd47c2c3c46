"""Where relevance is lost: recall's ranking steps one at a time, on every kind of text.

    python bench/ablation.py [--data /work/shared/bench-data] [--sets locomo,beam,notes,devbench]

Each data set is embedded once with the local model (cached in ``bench/.cache/``, by text) and
indexed with the keyword leg's own tokeniser and BM25. Every question then goes through recall's
own code — the vector's nearest 100 by exact cosine (what both backends return), the keyword
leg's best 100, ``fuse`` and ``rank`` from ``shared.ranking`` — and is read after each step:

  plain cosine      the nearest by cosine alone
  fused             by fused relevance, no gate
  + gates           the floor and the mode's fraction-of-top cut
  + newer-first     revisions ahead of what they revise
  recall            the whole of ``rank`` (tie-break with no access counts: offline there are
                    none; the served stages measure them)

Memories are written one second apart in the data set's order, so "newer" means later in the
conversation. Prints Markdown: R@5 at the balanced default (limit 5) and R@10 at the exploratory
default (limit 10) per step; then confidence (HIGH precision on the first result, HIGH on
questions about nothing stored) and, on the long chats, updates ranked above the original.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_beam, load_devbench, load_locomo, load_tech_notes
from shared.embedding.local import LocalEmbedder
from shared.lexical import KeywordQuery, LexicalIndex, terms
from shared.lexical.segments import label_terms, passage_counts
from shared.model import Hit, Memory, iso_ms
from shared.model.tokens import names
from shared.operations.fusion import fuse, with_feedback
from shared.operations.recall import (
    FETCH_WINDOW,
    KEYWORD_CANDIDATES,
    RECALL_CANDIDATES,
    reranked,
)
from shared.ranking import (
    MODE_PROFILES,
    Candidate,
    RecallOutcome,
    gate,
    names_first,
    newer_first,
    passes_floor,
    query_names_held,
    rank,
    rank_order,
)
from shared.ranking.score import CLEAR_RATIO, is_strong
from shared.ranking.versions import REVISION_BAND

FLOOR: Final = 0.30  # the local model's floor and HIGH line (shared.config)
HIGH_SIMILARITY: Final = 0.50
BATCH: Final = 64
CACHE: Final = Path(__file__).resolve().parent / ".cache"
HARBOR: Final = Path(__file__).resolve().parent / "calibration_set.json"
BASE_MS: Final = 1_767_225_600_000  # 2026-01-01
STEPS: Final = ("plain cosine", "fused", "+ gates", "+ names first", "+ newer-first", "recall")
Vector = npt.NDArray[np.float32]


@dataclass
class Asked:
    text: str
    evidence: set[str]
    negative: bool = False  # about something never stored: nothing may come back HIGH
    original: set[str] = field(default_factory=set)
    updated: set[str] = field(default_factory=set)


@dataclass
class Corpus:
    family: str
    name: str
    documents: list[tuple[str, str]]  # (id, text) in the order they were written
    questions: list[Asked]
    metric: str = "recall"  # or "hit": any evidence found counts as 1


def corpora(data: Path, sets: set[str]) -> list[Corpus]:
    found: list[Corpus] = []
    if "locomo" in sets:
        for c in load_locomo(data):
            found.append(
                Corpus(
                    "LoCoMo",
                    f"locomo-{c.sample_id}",
                    [(t.dia_id, t.content) for t in c.turns],
                    [Asked(q.text, set(q.evidence.turns)) for q in c.questions if q.evidence.turns],
                )
            )
    if "beam" in sets:
        for chat in load_beam(data):
            found.append(
                Corpus(
                    "long chats (BEAM dev)",
                    f"beam-{chat.chat}",
                    [(str(m.id), m.stored) for m in chat.messages],
                    [
                        Asked(
                            q.text,
                            {str(i) for i in q.evidence},
                            negative=q.kind == "abstention",
                            original={str(i) for i in q.original},
                            updated={str(i) for i in q.updated},
                        )
                        for q in chat.questions
                    ],
                )
            )
    if "notes" in sets:
        tech = load_tech_notes()
        for hard in (False, True):
            found.append(
                Corpus(
                    "technical notes, hard" if hard else "technical notes",
                    "notes-hard" if hard else "notes",
                    list(tech.notes.items()),
                    [Asked(q.text, set(q.answers)) for q in tech.questions if q.hard is hard],
                )
            )
    if "harbor" in sets:
        # Our calibration set: one project's notes, questions worded otherwise, and questions
        # about things it never stored.
        raw = json.loads(HARBOR.read_text())
        found.append(
            Corpus(
                "Harbor (calibration)",
                "harbor",
                list(raw["memories"].items()),
                [Asked(q, set(answers)) for q, answers in raw["answered"]]
                + [Asked(q, set(), negative=True) for q in raw["not_stored"]],
            )
        )
    if "devbench" in sets:
        dev = load_devbench(data)
        found.append(
            Corpus(
                "DevBench",
                "devbench",
                [(m.id, m.content) for m in dev.memories],
                [Asked(q.question, set(q.expected), negative=not q.expected) for q in dev.queries],
                metric="hit",
            )
        )
    return found


async def embedded(embedder: LocalEmbedder, texts: Sequence[str], name: str) -> Vector:
    """The texts' vectors, from the cache when the same texts were embedded before."""
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{name}-{digest}.npy"
    if path.exists():
        cached: Vector = np.load(path)
        return cached
    vectors: list[list[float]] = []
    for start in range(0, len(texts), BATCH):
        vectors += await embedder.embed_many(texts[start : start + BATCH])
    array = np.asarray(vectors, dtype=np.float32)
    CACHE.mkdir(exist_ok=True)
    np.save(path, array)
    return array


@dataclass
class Tenant:
    """One corpus as recall sees it: memories, their vectors, the keyword index."""

    memories: list[Memory]
    vectors: Vector
    index: LexicalIndex

    @classmethod
    def of(cls, corpus: Corpus, vectors: Vector) -> Tenant:
        memories = [
            Memory(
                id=doc_id, tenant=corpus.name, content=text, created_at=iso_ms(BASE_MS + i * 1000)
            )
            for i, (doc_id, text) in enumerate(corpus.documents)
        ]
        index = LexicalIndex()
        for memory in memories:
            index.add(memory.id, passage_counts(memory.content), label_terms(memory))
        return cls(memories, vectors, index)

    def candidates(
        self, query: str, vector: Vector, *, limit: int
    ) -> tuple[list[str], list[Candidate], bool]:
        """Plain cosine's order, and recall's candidates (``recall_candidates``: the keyword-only
        hits within the fetch window get their bodies, the others are dropped; the first
        fusion's best are the keyword leg's feedback, and both legs are fused again)."""
        cosines = self.vectors @ vector
        nearest = np.argsort(-cosines, kind="stable")[:RECALL_CANDIDATES]
        hits = [Hit(memory=self.memories[i], similarity=float(cosines[i])) for i in nearest]
        include = [h.memory.id for h in hits]
        scored = KeywordQuery(self.index, terms(query), names=names(query))
        keyword = scored.result(top_k=KEYWORD_CANDIDATES, include=include)
        kept = self._kept(fuse(hits, keyword, floor=FLOOR), set(), limit)
        kept = with_feedback(reranked(kept, limit=limit), scored, floor=FLOOR)
        return [h.memory.id for h in hits], kept, scored.absent_names > 0

    def _kept(self, fused: list[Candidate], found: set[str], limit: int) -> list[Candidate]:
        passing = sorted(
            (c for c in fused if passes_floor(c, floor=FLOOR)),
            key=rank_order,
            reverse=True,
        )
        found.update(c.memory_id for c in passing[: limit * FETCH_WINDOW] if c.memory is None)
        by_id = self.__dict__.setdefault("_by_id", {m.id: m for m in self.memories})
        return [
            c if c.memory is not None else msgspec.structs.replace(c, memory=by_id[c.memory_id])
            for c in fused
            if c.memory is not None or c.memory_id in found
        ]


def steps(
    order_cosine: list[str], candidates: list[Candidate], mode: str, limit: int
) -> dict[str, list[str]]:
    """Each step's returned ids for one question."""
    profile = MODE_PROFILES[mode]  # type: ignore[index]
    fused = sorted(candidates, key=lambda c: c.relevance, reverse=True)
    gated = gate(fused, floor=FLOOR, keep_ratio=profile.keep_ratio)
    memories = [c.memory for c in gated if c.memory is not None]
    relevance = [c.relevance for c in gated]
    names_held = [query_names_held(c) for c in gated]
    named = names_first(relevance, names_held)
    own = [c.own_relevance for c in gated]
    newer = newer_first(named[:limit], memories, own, names_held, band=REVISION_BAND * FLOOR)
    outcome = ranked(candidates, mode, limit)
    return {
        "plain cosine": order_cosine[:limit],
        "fused": [c.memory_id for c in fused[:limit]],
        "+ gates": [c.memory_id for c in gated[:limit]],
        "+ names first": [memories[i].id for i in named[:limit]],
        "+ newer-first": [memories[i].id for i in newer[:limit]],
        "recall": [r.memory.id for r in outcome.results],
    }


def ranked(
    candidates: list[Candidate], mode: str, limit: int, *, names_absent: bool = False
) -> RecallOutcome:
    return rank(
        candidates,
        {},
        profile=MODE_PROFILES[mode],  # type: ignore[index]
        limit=limit,
        floor=FLOOR,
        high_similarity=HIGH_SIMILARITY,
        now_ms=BASE_MS + 86_400_000,
        names_absent=names_absent,
    )


def score(returned: Sequence[str], evidence: set[str], metric: str) -> float:
    found = len(evidence & set(returned))
    if metric == "hit":
        return float(found > 0)
    return found / len(evidence)


@dataclass
class Tally:
    recall5: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    recall10: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    high: int = 0
    high_right: int = 0
    first_right: int = 0
    answered: int = 0
    negatives: int = 0
    negatives_high: int = 0
    updates: int = 0
    updates_first: int = 0
    updates_returned: int = 0
    # Each answered question's first result, for the calibration table.
    firsts: list[First] = field(default_factory=list)


@dataclass(frozen=True)
class First:
    """What confidence is decided on, for one question's first result (balanced mode)."""

    candidate: Candidate
    runner_up: float
    names_absent: bool
    right: bool
    negative: bool


def first_of(
    candidates: list[Candidate], outcome: RecallOutcome, absent: bool, question: Asked
) -> First:
    top_id = outcome.results[0].memory.id
    relevant = sorted(
        (
            c.own_relevance
            for c in candidates
            if c.memory is not None and passes_floor(c, floor=FLOOR, own=True)
        ),
        reverse=True,
    )
    top = next(c for c in candidates if c.memory_id == top_id)
    return First(
        candidate=top,
        runner_up=relevant[1] if len(relevant) > 1 else 0.0,
        names_absent=absent,
        right=top_id in question.evidence,
        negative=question.negative,
    )


# (HIGH line, clear ratio) pairs the calibration table shows; the shipped pair is bold.
CALIBRATION_GRID: Final = (
    (0.45, 1.8),
    (0.50, 1.5),
    (0.50, CLEAR_RATIO),
    (0.50, 2.0),
    (0.55, 1.8),
    (0.50, 1.0),
)


def calibration(tallies: dict[str, Tally]) -> str:
    """HIGH precision per data set for each rule of the grid (first result right when HIGH),
    and HIGH answers to questions about nothing stored."""
    families = list(tallies)
    lines = [
        "| HIGH line | clear ratio | " + " | ".join(families) + " | not stored HIGH |",
        "|---|---|" + "---|" * (len(families) + 1),
    ]
    for line, ratio in CALIBRATION_GRID:
        cells, negatives = [], 0
        for tally in tallies.values():
            high = [
                f
                for f in tally.firsts
                if is_strong(
                    f.candidate,
                    runner_up=f.runner_up,
                    high_similarity=line,
                    names_absent=f.names_absent,
                    clear_ratio=ratio,
                )
            ]
            answered = [f for f in high if not f.negative]
            negatives += len(high) - len(answered)
            right = sum(f.right for f in answered)
            cells.append(f"{right}/{len(answered)}")
        shipped = (line, ratio) == (HIGH_SIMILARITY, CLEAR_RATIO)
        mark = "**" if shipped else ""
        lines.append(
            f"| {mark}{line}{mark} | {mark}{ratio}{mark} | "
            + " | ".join(cells)
            + f" | {negatives} |"
        )
    return "\n".join(lines)


def _position(order: Sequence[str], ids: set[str]) -> int:
    return next((i for i, m in enumerate(order) if m in ids), len(order) + 1)


async def measure(
    data: Path, sets: set[str], *, only: Callable[[Corpus], bool] = lambda c: True
) -> dict[str, Tally]:
    embedder = await LocalEmbedder.open()
    tallies: dict[str, Tally] = {}
    try:
        for corpus in corpora(data, sets):
            if not only(corpus):
                continue
            print(
                f"  {corpus.name}: {len(corpus.documents)} memories, "
                f"{len(corpus.questions)} questions",
                file=sys.stderr,
                flush=True,
            )
            vectors = await embedded(embedder, [t for _, t in corpus.documents], corpus.name)
            asked = await embedded(embedder, [q.text for q in corpus.questions], corpus.name + "-q")
            tenant = Tenant.of(corpus, vectors)
            tally = tallies.setdefault(corpus.family, Tally())
            for question, vector in zip(corpus.questions, asked, strict=True):
                cosine, candidates, absent = tenant.candidates(question.text, vector, limit=10)
                outcome = ranked(candidates, "balanced", 5, names_absent=absent)
                if question.negative:
                    tally.negatives += 1
                    tally.negatives_high += outcome.confidence == "high"
                    if outcome.results:
                        tally.firsts.append(first_of(candidates, outcome, absent, question))
                if not question.evidence:
                    continue
                five = steps(cosine, candidates, "balanced", 5)
                ten = steps(cosine, candidates, "exploratory", 10)
                for step in STEPS:
                    tally.recall5[step].append(score(five[step], question.evidence, corpus.metric))
                    tally.recall10[step].append(score(ten[step], question.evidence, corpus.metric))
                if outcome.results:
                    tally.answered += 1
                    tally.firsts.append(first_of(candidates, outcome, absent, question))
                    right = outcome.results[0].memory.id in question.evidence
                    tally.first_right += right
                    if outcome.confidence == "high":
                        tally.high += 1
                        tally.high_right += right
                if question.original and question.updated:
                    deep = [r.memory.id for r in ranked(candidates, "balanced", 100).results]
                    tally.updates += 1
                    new, old = _position(deep, question.updated), _position(deep, question.original)
                    tally.updates_first += new < old
                    shown = [r.memory.id for r in outcome.results]
                    new, old = (
                        _position(shown, question.updated),
                        _position(shown, question.original),
                    )
                    tally.updates_returned += new < old
    finally:
        await embedder.close()
    return tallies


def report(tallies: dict[str, Tally]) -> str:
    families = list(tallies)
    lines = ["| step | " + " | ".join(families) + " |", "|---|" + "---|" * len(families)]
    for step in STEPS:
        cells = [
            f"{np.mean(t.recall5[step]):.3f} / {np.mean(t.recall10[step]):.3f}"
            for t in tallies.values()
        ]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    lines += ["", "R@5 at balanced/5, R@10 at exploratory/10 (DevBench: hit@5 / hit@10).", ""]
    lines += [
        "| confidence (balanced) | " + " | ".join(families) + " |",
        "|---|" + "---|" * len(families),
    ]
    lines.append(
        "| HIGH precision (first result right) | "
        + " | ".join(f"{t.high_right}/{t.high}" for t in tallies.values())
        + " |"
    )
    lines.append(
        "| first result right, all answers | "
        + " | ".join(f"{t.first_right}/{t.answered}" for t in tallies.values())
        + " |"
    )
    lines.append(
        "| HIGH on questions about nothing stored | "
        + " | ".join(
            f"{t.negatives_high}/{t.negatives}" if t.negatives else "–" for t in tallies.values()
        )
        + " |"
    )
    lines.append(
        "| update ranked above the original | "
        + " | ".join(
            f"{t.updates_first}/{t.updates}" if t.updates else "–" for t in tallies.values()
        )
        + " |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--sets", default="locomo,beam,notes,harbor,devbench")
    args = parser.parse_args()
    tallies = asyncio.run(measure(args.data, set(args.sets.split(","))))
    print(report(tallies))
    print()
    print("HIGH precision by rule (first result right / HIGH answers):")
    print()
    print(calibration(tallies))


if __name__ == "__main__":
    main()
