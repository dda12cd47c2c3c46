"""Whether a memory's category or tag, asked as a one-word query, finds the memory.

    python bench/labels.py [--data /work/shared/bench-data] [--without-labels]

Projects of several sizes whose memories carry a category and tags, some of which their text
says and some it does not: Harbor (bench/calibration_set.json) with labels written for it, at
5, 12 and 30 memories; DevBench's 30 memories with their own tags and type as category; the 65
technical notes of bench/data/tech_notes_a.json with their kind ("debugging", "runbook") as
category and their project as tag; and two mixed projects of 200 and 400 memories, the labelled
ones above among messages of the BEAM coding chats, which carry none.

Every distinct category and tag of a project is asked as the query, through recall's own
fusion and ranking (``bench/ablation.py``'s tenant: vector leg, keyword leg, fuse, gate,
rank) at the balanced default (limit 5). A query is answered when its results hold
min(holders, 5) of the memories carrying it; "some" counts a query whose results hold at least
one. The project's questions worded otherwise (Harbor's answered questions, DevBench's) are
asked too (R@5, nothing may be lost), and its questions about nothing stored (Harbor's 15,
DevBench's 5 negatives), which must never come back HIGH.

``--without-labels`` indexes the same memories without their labels: what recall did before
labels were indexed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_beam, load_devbench
from bench.ablation import BASE_MS, HARBOR, Tenant, Vector, embedded, ranked
from shared.embedding.local import LocalEmbedder
from shared.lexical import LexicalIndex
from shared.lexical.segments import label_terms, passage_counts
from shared.model import Memory, iso_ms

LIMIT: Final = 5
TECH_NOTES: Final = Path(__file__).resolve().parent / "data" / "tech_notes_a.json"
# Harbor's memories filed as someone would: a category and tags, several of them words the text
# never uses ("observability", "ownership", "privacy").
HARBOR_LABELS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "m01": ("deployment", ("helm", "production")),
    "m02": ("tooling", ("javascript", "packages")),
    "m03": ("testing", ("postgresql", "docker")),
    "m04": ("database", ("staging", "privacy")),
    "m05": ("architecture", ("queue", "decision")),
    "m06": ("release", ("feature-flags", "checkout")),
    "m07": ("ownership", ("billing", "people")),
    "m08": ("api", ("conventions", "mobile")),
    "m09": ("data", ("etl", "s3", "incident")),
    "m10": ("observability", ("logging", "security")),
    "m11": ("release", ("git", "hotfix")),
    "m12": ("frontend", ("nextjs", "conventions")),
    "m13": ("payments", ("incident", "timeouts")),
    "m14": ("development", ("local", "ports")),
    "m15": ("database", ("migrations", "conventions")),
    "m16": ("conventions", ("git", "preferences")),
    "m17": ("observability", ("secrets", "errors")),
    "m18": ("search", ("korean", "infrastructure")),
    "m19": ("api", ("gateway", "limits")),
    "m20": ("ci", ("testing", "flaky")),
    "m21": ("build", ("docker", "arm64")),
    "m22": ("security", ("auth", "tokens")),
    "m23": ("compliance", ("privacy", "aws")),
    "m24": ("debugging", ("worker", "memory")),
    "m25": ("process", ("review", "github")),
    "m26": ("tooling", ("python", "dependencies")),
    "m27": ("email", ("aws", "limits")),
    "m28": ("api", ("codegen", "graphql")),
    "m29": ("operations", ("oncall", "people")),
    "m30": ("infrastructure", ("caching", "cdn")),
}
# A technical note's kind, from the words its first line opens with.
NOTE_KINDS: Final = (
    ("post-mortem", "incident"),
    ("incident", "incident"),
    ("decision", "decision"),
    ("design", "decision"),
    ("runbook", "runbook"),
    ("deployment", "runbook"),
    ("review", "code-review"),
    ("config", "configuration"),
    ("explanation", "configuration"),
    ("explainer", "configuration"),
    ("performance", "performance"),
    ("power", "performance"),
    ("testing", "testing"),
    ("build", "build"),
    ("debugging", "debugging"),
    ("bug", "debugging"),
)
NOTE_PROJECTS: Final = (
    "tidewatch",
    "larkspur",
    "quarry-operator",
    "beacon",
    "heron",
    "ledgerd",
    "vireo",
    "kestrel-train",
)


Labels = tuple[str | None, tuple[str, ...]]


@dataclass
class Project:
    name: str
    memories: list[Memory]
    answered: list[tuple[str, set[str]]] = field(default_factory=list)
    not_stored: list[str] = field(default_factory=list)


def memory(project: str, i: int, memory_id: str, text: str, labels: Labels) -> Memory:
    category, tags = labels
    return Memory(
        id=memory_id,
        tenant=project,
        content=text,
        category=category,
        tags=tags,
        created_at=iso_ms(BASE_MS + i * 1000),
    )


def harbor(count: int) -> Project:
    raw = json.loads(HARBOR.read_text())
    ids = list(raw["memories"])[:count]
    return Project(
        f"harbor-{count}",
        [memory("h", i, m, raw["memories"][m], HARBOR_LABELS[m]) for i, m in enumerate(ids)],
        [(q, set(a)) for q, a in raw["answered"] if set(a) <= set(ids)],
        raw["not_stored"],
    )


def devbench(data: Path) -> Project:
    dev = load_devbench(data)
    # "devbench" is on every memory and "bench:<id>" is its id: neither is a topic.
    return Project(
        "devbench-30",
        [
            memory(
                "d",
                i,
                m.id,
                m.content,
                (
                    m.memory_type,
                    tuple(t for t in m.tags if t != "devbench" and not t.startswith("bench:")),
                ),
            )
            for i, m in enumerate(dev.memories)
        ],
        [(q.question, set(q.expected)) for q in dev.queries if q.expected],
        [q.question for q in dev.queries if not q.expected],
    )


def note_labels(text: str) -> Labels:
    opening = text.split("\n", 1)[0].lower()
    first = opening.split(":", 1)[0]
    kind = next((k for word, k in NOTE_KINDS if word in first), "notes")
    project = next((p for p in NOTE_PROJECTS if p in opening or p in text.lower()), None)
    return kind, (project,) if project else ()


def tech_notes() -> Project:
    raw = json.loads(TECH_NOTES.read_text())
    return Project(
        "notes-65",
        [
            memory("n", i, n["id"], n["text"], note_labels(n["text"]))
            for i, n in enumerate(raw["notes"])
        ],
    )


def mixed(size: int, parts: Sequence[Project], data: Path) -> Project:
    """``parts`` among unlabelled messages of the BEAM coding chats, ``size`` memories in all."""
    held = [m for p in parts for m in p.memories]
    filler = [
        msg.stored for chat in load_beam(data)[:5] for msg in chat.messages if len(msg.stored) > 200
    ]
    step = max(1, len(filler) // (size - len(held)))
    chosen = filler[::step][: size - len(held)]
    unlabelled = [memory("b", i, f"beam{i}", t, (None, ())) for i, t in enumerate(chosen)]
    # Interleaved, so the labelled memories are not all the oldest.
    every = len(unlabelled) / max(1, len(held))
    merged = sorted(
        [*held, *unlabelled],
        key=lambda m: (
            int(m.id[4:]) if m.id.startswith("beam") else held.index(m) * every,
            not m.id.startswith("beam"),
        ),
    )
    return Project(
        f"mixed-{size}",
        [
            Memory(
                id=m.id,
                tenant=m.tenant,
                content=m.content,
                category=m.category,
                tags=m.tags,
                created_at=iso_ms(BASE_MS + i * 1000),
            )
            for i, m in enumerate(merged)
        ],
        [a for p in parts for a in p.answered],
        [q for p in parts for q in p.not_stored],
    )


def label_queries(memories: Sequence[Memory]) -> dict[str, set[str]]:
    """Each distinct category and tag, as written, and the memories carrying it."""
    found: dict[str, set[str]] = {}
    for m in memories:
        for label in {m.category, *m.tags} - {None}:
            assert label is not None
            found.setdefault(label, set()).add(m.id)
    return found


@dataclass
class Figures:
    queries: int = 0
    answered: float = 0.0
    some: int = 0
    label_high: int = 0
    label_high_wrong: int = 0
    recall5: list[float] = field(default_factory=list)
    not_stored: int = 0
    not_stored_high: int = 0
    not_stored_shown: int = 0
    not_stored_nothing: int = 0
    missed: list[str] = field(default_factory=list)


def tenant_of(project: Project, vectors: Vector, with_labels: bool) -> Tenant:
    index = LexicalIndex()
    for m in project.memories:
        index.add(m.id, passage_counts(m.content), label_terms(m) if with_labels else ())
    return Tenant(project.memories, vectors, index)


async def measure(project: Project, embedder: LocalEmbedder, with_labels: bool) -> Figures:
    vectors = await embedded(embedder, [m.content for m in project.memories], project.name)
    tenant = tenant_of(project, vectors, with_labels)
    labels = label_queries(project.memories)
    asked = [*labels, *(q for q, _ in project.answered), *project.not_stored]
    queries = await embedded(embedder, asked, project.name + "-labels-q")
    by_text = dict(zip(asked, queries, strict=True))
    figures = Figures()

    def results(query: str) -> tuple[list[str], str]:
        _, candidates, absent = tenant.candidates(query, by_text[query], limit=LIMIT)
        outcome = ranked(candidates, "balanced", LIMIT, names_absent=absent)
        return [r.memory.id for r in outcome.results], outcome.confidence

    for label, holders in labels.items():
        found, confidence = results(label)
        share = len(holders & set(found)) / min(len(holders), LIMIT)
        figures.queries += 1
        figures.answered += share == 1.0
        figures.some += share > 0
        figures.label_high += confidence == "high"
        figures.label_high_wrong += confidence == "high" and found[0] not in holders
        if share < 1.0:
            figures.missed.append(f"{label} ({len(holders & set(found))}/{len(holders)})")
    for question, evidence in project.answered:
        found, _ = results(question)
        figures.recall5.append(len(evidence & set(found)) / len(evidence))
    for question in project.not_stored:
        found, confidence = results(question)
        figures.not_stored += 1
        figures.not_stored_high += confidence == "high"
        figures.not_stored_shown += len(found)
        figures.not_stored_nothing += not found
    return figures


async def run(data: Path, with_labels: bool) -> list[tuple[Project, Figures]]:
    small = [harbor(5), harbor(12), harbor(30), devbench(data), tech_notes()]
    notes_b = json.loads(TECH_NOTES.with_name("tech_notes_b.json").read_text())["notes"]
    notes_b_project = Project(
        "notes-b",
        [
            memory("nb", i, n["id"], n["text"], note_labels(n["text"]))
            for i, n in enumerate(notes_b)
        ],
    )
    projects = [
        *small,
        mixed(200, [small[2], small[3], small[4]], data),
        mixed(400, [small[2], small[3], small[4], notes_b_project], data),
    ]
    embedder = await LocalEmbedder.open()
    try:
        return [(p, await measure(p, embedder, with_labels)) for p in projects]
    finally:
        await embedder.close()


def report(measured: list[tuple[Project, Figures]]) -> str:
    lines = [
        "| project | memories | label queries | answered | some | HIGH (first not labelled) "
        "| paraphrase R@5 | not stored: HIGH | answered nothing | results shown |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for project, f in measured:
        r5 = f"{sum(f.recall5) / len(f.recall5):.3f}" if f.recall5 else "–"
        lines.append(
            f"| {project.name} | {len(project.memories)} | {f.queries} | "
            f"{int(f.answered)}/{f.queries} | {f.some}/{f.queries} | "
            f"{f.label_high} ({f.label_high_wrong}) | {r5} | {f.not_stored_high}/{f.not_stored} | "
            f"{f.not_stored_nothing}/{f.not_stored} | {f.not_stored_shown} |"
        )
    total = sum(f.queries for _, f in measured)
    answered = sum(f.answered for _, f in measured)
    lines += ["", f"label queries answered: {int(answered)}/{total} ({answered / total:.1%})"]
    for project, f in measured:
        if f.missed:
            lines.append(f"- {project.name} missed: {', '.join(f.missed)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--without-labels", action="store_true")
    args = parser.parse_args()
    print(report(asyncio.run(run(args.data, not args.without_labels))))


if __name__ == "__main__":
    main()
