"""Measure where RECALL_MIN_SIMILARITY belongs for the local model, as the design did for Titan.

    python bench/calibrate_floor.py [--floor 0.3] [--devbench PATH]

Embeds bench/calibration_set.json (30 memories of one project, 28 questions about them worded
differently, 15 questions about things never stored, 10 facts reworded / with a typo / with one
value changed) and the public devbench set (30 memories, 15 answered and 5 negative queries), prints
the cosine table, the gap between answered and not-stored questions, what a given floor lets
through, and how the compiled-in dedup rule (cosine > 0.92 and word Jaccard >= 0.5) treats the
variants. Output is Markdown, pasted into docs/calibration.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from shared.config import PROVIDER_DEFAULTS
from shared.embedding.local import LocalEmbedder
from shared.ranking.dedup import DEDUP_MIN_WORD_OVERLAP, DEDUP_THRESHOLD, word_overlap
from shared.ranking.modes import MODE_PROFILES

HERE = Path(__file__).parent
DEVBENCH = Path("/work/shared/bench-data/devbench_dataset.json")
Matrix = npt.NDArray[np.float64]
SWEEP_FLOORS = (0.15, 0.20, 0.25, 0.28, 0.30, 0.32, 0.35, 0.40, 0.45)
# The design's rule for HIGH, which the sweep reports beside each floor: three times the floor.
HIGH_CONFIDENCE_MULTIPLE = 3.0


@dataclass(frozen=True)
class Corpus:
    """Memories by id, answered questions with their answers' ids, and unanswerable questions."""

    name: str
    memory_ids: list[str]
    memories: list[str]
    answered: list[tuple[str, list[str]]]
    not_stored: list[str]


@dataclass(frozen=True)
class Scores:
    corpus: Corpus
    answered: Matrix  # questions x memories
    not_stored: Matrix


def own_corpus() -> tuple[Corpus, list[dict[str, str]]]:
    data = json.loads((HERE / "calibration_set.json").read_text())
    ids = list(data["memories"])
    corpus = Corpus(
        name="Harbor (bench/calibration_set.json)",
        memory_ids=ids,
        memories=[data["memories"][i] for i in ids],
        answered=[(q, answers) for q, answers in data["answered"]],
        not_stored=data["not_stored"],
    )
    return corpus, data["variants"]


def devbench_corpus(path: Path) -> Corpus:
    data = json.loads(path.read_text())
    queries = data["queries"]
    return Corpus(
        name="devbench (doobidoo/mcp-memory-service, Apache-2.0)",
        memory_ids=[m["id"] for m in data["memories"]],
        memories=[m["content"] for m in data["memories"]],
        answered=[(q["question"], q["expected_tags"]) for q in queries if q["expected_tags"]],
        not_stored=[q["question"] for q in queries if not q["expected_tags"]],
    )


async def embed(embedder: LocalEmbedder, texts: list[str]) -> Matrix:
    return np.array(await embedder.embed_many(texts), dtype=np.float64)


async def score(embedder: LocalEmbedder, corpus: Corpus) -> Scores:
    memories = await embed(embedder, corpus.memories)
    answered = await embed(embedder, [q for q, _ in corpus.answered])
    not_stored = await embed(embedder, corpus.not_stored)
    # Unit vectors: the dot product is the cosine, i.e. what both stores report as similarity.
    return Scores(corpus, answered @ memories.T, not_stored @ memories.T)


def span(values: list[float]) -> str:
    v = np.array(values)
    return f"{v.min():.2f} – {v.max():.2f} (median {np.median(v):.2f}, n={len(v)})"


def split(scores: Scores) -> tuple[list[float], list[float], list[float], list[float]]:
    """(every correct pair, best correct per question, every other memory, top per not-stored)."""
    ids = scores.corpus.memory_ids
    correct, best_correct, others = [], [], []
    for row, (_, answers) in zip(scores.answered, scores.corpus.answered, strict=True):
        right = [float(row[ids.index(a)]) for a in answers]
        correct += right
        best_correct.append(max(right))
        others += [float(s) for i, s in enumerate(row) if ids[i] not in answers]
    top_absent = [float(row.max()) for row in scores.not_stored]
    return correct, best_correct, others, top_absent


def cosine_table(scores: Scores) -> list[str]:
    correct, best, others, absent = split(scores)
    every_absent = [float(s) for s in scores.not_stored.ravel()]
    return [
        f"#### {scores.corpus.name}",
        "",
        "| | cosine |",
        "|---|---|",
        f"| correct answer to a question phrased differently | {span(correct)} |",
        f"| … the best correct answer per question | {span(best)} |",
        f"| a different memory from the same project | {span(others)} |",
        f"| … its 95th percentile | {np.percentile(others, 95):.2f} |",
        f"| a question about something not stored (every memory) | {span(every_absent)} |",
        f"| … the top hit per not-stored question | {span(absent)} |",
        "",
    ]


def gate(row: npt.NDArray[np.float64], *, floor: float, keep_ratio: float, limit: int) -> list[int]:
    """What recall would return on similarity alone: floor, fraction of the top, limit."""
    passing = [i for i in np.argsort(-row) if row[i] >= floor]
    if not passing:
        return []
    top = row[passing[0]]
    return [int(i) for i in passing if row[i] >= top * keep_ratio][:limit]


def floor_report(scores: Scores, floor: float) -> list[str]:
    ids = scores.corpus.memory_ids
    profile = MODE_PROFILES["balanced"]
    found = top1 = high = returned = 0
    for row, (_, answers) in zip(scores.answered, scores.corpus.answered, strict=True):
        kept = gate(row, floor=floor, keep_ratio=profile.keep_ratio, limit=profile.limit)
        returned += len(kept)
        found += any(ids[i] in answers for i in kept)
        top1 += bool(kept) and ids[kept[0]] in answers
        high += bool(kept) and row[kept[0]] >= HIGH_CONFIDENCE_MULTIPLE * floor
    n = len(scores.corpus.answered)
    silent = sum(1 for row in scores.not_stored if row.max() < floor)
    leaked = sum(
        len(gate(row, floor=floor, keep_ratio=profile.keep_ratio, limit=profile.limit))
        for row in scores.not_stored
    )
    m = len(scores.corpus.not_stored)
    return [
        f"| {scores.corpus.name} | {found}/{n} | {top1}/{n} | {returned / n:.1f} | {high}/{n} "
        f"| {silent}/{m} | {leaked} |"
    ]


def sweep(all_scores: list[Scores]) -> list[str]:
    """Per candidate floor: answered questions whose best answer clears it, and not-stored
    questions whose top hit stays under it, per set."""
    names = " | ".join(
        f"{s.corpus.name.split(' ')[0]}: answers kept, absent silent" for s in all_scores
    )
    lines = [f"| floor | {names} |", "|---|" + "---|" * len(all_scores)]
    for floor in SWEEP_FLOORS:
        cells = []
        for s in all_scores:
            _, best, _, absent = split(s)
            kept = sum(b >= floor for b in best)
            silent = sum(a < floor for a in absent)
            cells.append(f"{kept}/{len(best)}, {silent}/{len(absent)}")
        lines.append(f"| {floor:.2f} | " + " | ".join(cells) + " |")
    return lines


def suggested_floor(all_scores: list[Scores]) -> tuple[float, float, float]:
    """(lowest best-correct, highest not-stored top, the threshold that best separates them)."""
    best = sorted(b for s in all_scores for b in split(s)[1])
    absent = sorted(a for s in all_scores for a in split(s)[3])
    candidates = np.arange(0.05, 0.80, 0.01)
    # Each misplaced question costs one; ties go to the middle of the widest run of best values.
    errors = [sum(b < t for b in best) + sum(a >= t for a in absent) for t in candidates]
    lowest = min(errors)
    run = [float(t) for t, e in zip(candidates, errors, strict=True) if e == lowest]
    return best[0], absent[-1], round((run[0] + run[-1]) / 2, 2)


async def dedup_table(
    embedder: LocalEmbedder, corpus: Corpus, variants: list[dict[str, str]]
) -> list[str]:
    lines = [
        f"| variant of the stored fact | cosine | word Jaccard | merged (cos > {DEDUP_THRESHOLD}, "
        f"J ≥ {DEDUP_MIN_WORD_OVERLAP}) |",
        "|---|---|---|---|",
    ]
    originals = [corpus.memories[corpus.memory_ids.index(v["of"])] for v in variants]
    base = await embed(embedder, originals)
    for kind in ("reworded", "typo", "changed"):
        texts = [v[kind] for v in variants]
        cosines = (await embed(embedder, texts) * base).sum(axis=1)
        overlaps = [word_overlap(t, o) for t, o in zip(texts, originals, strict=True)]
        merged = sum(
            1
            for c, j in zip(cosines, overlaps, strict=True)
            if c > DEDUP_THRESHOLD and j >= DEDUP_MIN_WORD_OVERLAP
        )
        lines.append(
            f"| {kind} | {span([float(c) for c in cosines])} | {min(overlaps):.2f} – "
            f"{max(overlaps):.2f} | {merged}/{len(texts)} |"
        )
    memories = await embed(embedder, corpus.memories)
    pairwise = memories @ memories.T
    off_diagonal = pairwise[~np.eye(len(memories), dtype=bool)]
    lines.append(f"| (two different memories of the project) | {span(list(off_diagonal))} | | |")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", type=float, default=PROVIDER_DEFAULTS["local"].min_similarity)
    parser.add_argument("--devbench", type=Path, default=DEVBENCH)
    args = parser.parse_args()

    started = time.perf_counter()
    embedder = await LocalEmbedder.open()
    try:
        own, variants = own_corpus()
        corpora = [own] + ([devbench_corpus(args.devbench)] if args.devbench.exists() else [])
        all_scores = [await score(embedder, c) for c in corpora]
        dedup = await dedup_table(embedder, own, variants)
    finally:
        await embedder.close()

    lines = ["### Cosine, all-MiniLM-L6-v2 (int8 ONNX, mean-pooled, normalised, 384d)", ""]
    for s in all_scores:
        lines += cosine_table(s)
    lowest_best, highest_absent, suggestion = suggested_floor(all_scores)
    lines += [
        f"Lowest best-correct answer: {lowest_best:.2f}; highest top hit of a not-stored "
        f"question: {highest_absent:.2f}; fewest misplaced questions at {suggestion:.2f}.",
        "",
        f"### What a floor of {args.floor} does (balanced mode: fraction-of-top "
        f"{MODE_PROFILES['balanced'].keep_ratio}, limit {MODE_PROFILES['balanced'].limit})",
        "",
        "| set | answer returned | answer first | results per answered question "
        "| HIGH confidence | not-stored answered 'nothing' | results leaked to not-stored |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in all_scores:
        lines += floor_report(s, args.floor)
    lines += ["", "### Sweep", "", *sweep(all_scores)]
    lines += ["", "### Dedup on this model", "", *dedup, ""]
    lines.append(f"_{time.perf_counter() - started:.1f} s including model load._")
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
