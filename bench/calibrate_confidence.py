"""Measure where recall's HIGH line belongs for the local model (docs/calibration.md).

    python bench/calibrate_confidence.py [--data /work/shared/bench-data] [--locomo]

Remembers the Harbor set (bench/calibration_set.json) and the public devbench set through the
real MemoryService on a temporary embedded PostgreSQL with the local model, one tenant each,
asks every question in balanced mode, and records the first result: whether it answers the
question, its cosine and the share of the query's keyword weight it holds. Then it sweeps the
two numbers HIGH depends on — the cosine line (RECALL_HIGH_SIMILARITY) and the keyword coverage
that lifts a result above the floor to HIGH (HIGH_KEYWORD_COVERAGE) — and prints, per pair, the
precision of HIGH first results, the share of right first results that are HIGH, and how many
questions about nothing stored came back HIGH. Output is Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_devbench, load_locomo
from bench._inproc import open_local
from shared.config import PROVIDER_DEFAULTS
from shared.ranking.score import HIGH_KEYWORD_COVERAGE

HERE = Path(__file__).parent
DATA = Path("/work/shared/bench-data")
# What the local provider compiles in (shared.config.PROVIDER_DEFAULTS["local"]).
HIGH_LINE = PROVIDER_DEFAULTS["local"].high_similarity or 0.0
LINES = (0.45, 0.50, 0.55, 0.60, 0.65)
COVERAGES = (0.6, 0.7, 0.8, 0.9, 1.01)  # 1.01: keyword agreement never lifts to HIGH


@dataclass(frozen=True)
class Top:
    corpus: str
    question: str
    answerable: bool
    right: bool
    similarity: float
    coverage: float


async def measure(data: Path, *, locomo: bool) -> tuple[list[Top], float]:
    harbor = json.loads((HERE / "calibration_set.json").read_text())
    dev = load_devbench(data)
    corpora: dict[str, tuple[dict[str, str], list[tuple[str, set[str]]]]] = {
        "Harbor": (
            dict(harbor["memories"]),
            [(q, set(a)) for q, a in harbor["answered"]]
            + [(q, set()) for q in harbor["not_stored"]],
        ),
        "devbench": (
            {m.id: m.content for m in dev.memories},
            [(q.question, set(q.expected)) for q in dev.queries],
        ),
    }
    if locomo:
        # Right = the first result is one of the question's evidence turns.
        for conversation in load_locomo(data):
            corpora[f"LoCoMo {conversation.sample_id}"] = (
                {t.dia_id: t.content for t in conversation.turns},
                [
                    (q.text, set(q.evidence.turns))
                    for q in conversation.questions
                    if q.evidence.turns
                ],
            )
    tops: list[Top] = []
    with tempfile.TemporaryDirectory(prefix="mmc-", dir="/tmp") as tmp:
        async with open_local(Path(tmp)) as local:
            service = local.service
            for name, (memories, questions) in corpora.items():
                tenant = "calibration-" + name.lower().replace(" ", "-")
                by_memory: dict[str, str] = {}
                for key, text in memories.items():
                    stored = await service.remember(
                        tenant, None, content=text, memory_type="project",
                        category=None, tags=(), scope="project",
                    )  # fmt: skip
                    by_memory[stored.memory.id] = key
                for question, answers in questions:
                    answer = await service.recall(
                        tenant, None, query=question, mode="balanced", limit=5
                    )
                    outcome = answer.outcome
                    if outcome is None or not outcome.results:
                        tops.append(Top(name, question, bool(answers), False, 0.0, 0.0))
                        continue
                    first = outcome.results[0]
                    tops.append(
                        Top(
                            name,
                            question,
                            bool(answers),
                            by_memory.get(first.memory.id) in answers,
                            first.similarity,
                            first.coverage,
                        )
                    )
            floor = service.floor
    return tops, floor


def is_high(top: Top, *, line: float, coverage: float, floor: float) -> bool:
    if top.similarity == 0.0 and top.coverage == 0.0:
        return False  # nothing returned
    return top.similarity >= line or (top.similarity >= floor and top.coverage >= coverage)


def report(tops: list[Top], floor: float) -> list[str]:
    lines: list[str] = []
    for title, chosen in (
        ("Harbor and devbench", [t for t in tops if not t.corpus.startswith("LoCoMo")]),
        (
            "LoCoMo (right: the first result is an evidence turn)",
            [t for t in tops if t.corpus.startswith("LoCoMo")],
        ),
    ):
        if chosen:
            lines += [f"### {title}", "", *_sweep(chosen, floor)]
    lines += ["Wrong or absent first results of Harbor and devbench that are HIGH as compiled:", ""]
    for t in tops:
        if t.corpus.startswith("LoCoMo"):
            continue
        if is_high(t, line=HIGH_LINE, coverage=HIGH_KEYWORD_COVERAGE, floor=floor) and not t.right:
            lines.append(
                f"- {t.corpus}: {t.question!r} (cosine {t.similarity:.2f}, coverage "
                f"{t.coverage:.2f}, {'answerable' if t.answerable else 'nothing stored'})"
            )
    return lines


def _sweep(tops: list[Top], floor: float) -> list[str]:
    answerable = [t for t in tops if t.answerable]
    right = [t for t in answerable if t.right]
    absent = [t for t in tops if not t.answerable]
    lines = [
        f"{len(answerable)} answerable questions ({len(right)} answered right first), "
        f"{len(absent)} about nothing stored; floor {floor}.",
        "",
        "| HIGH line (cosine) | keyword coverage | HIGH precision | right first answers HIGH "
        "| not-stored HIGH |",
        "|---|---|---|---|---|",
    ]
    for line in LINES:
        for coverage in COVERAGES:
            high = [t for t in answerable if is_high(t, line=line, coverage=coverage, floor=floor)]
            wrong_high = sum(not t.right for t in high)
            absent_high = sum(is_high(t, line=line, coverage=coverage, floor=floor) for t in absent)
            precision = (len(high) - wrong_high) / (len(high) + absent_high) if high else 0.0
            covered = "never" if coverage > 1 else f"{coverage:.1f}"
            lines.append(
                f"| {line:.2f} | {covered} | {precision:.2f} ({len(high) - wrong_high}/"
                f"{len(high) + absent_high}) | {len(high) - wrong_high}/{len(right)} | "
                f"{absent_high}/{len(absent)} |"
            )
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the public sets")
    parser.add_argument("--locomo", action="store_true", help="also all 10 LoCoMo conversations")
    args = parser.parse_args()
    tops, floor = asyncio.run(measure(args.data, locomo=args.locomo))
    print("\n".join(report(tops, floor)))


if __name__ == "__main__":
    main()
