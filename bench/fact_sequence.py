"""Short facts stored in order, some later ones overriding earlier ones, among many facts of the
same pattern about other subjects: is the newest version of each overridden fact ranked above
every earlier one, and does remember link a fact to its own earlier version and to nothing else?

    python bench/fact_sequence.py [--subjects 40] [--seed 7] [--facts FILE] [--data-dir DIR]

Unlike ``bench/supersede_pairs.py`` (one pair a tenant, among facts of other kinds), one tenant
holds everything, as a user who tells an agent facts over weeks would: every person and company
gets one fact per relation ("Aiko Tanaka is a citizen of Chile.", "The CEO of Nordwind Logistics
is Marta Silva."), the facts are remembered shuffled, then about a quarter of them are overridden
in a random order (a few twice), between facts about new subjects. The overriding fact is the same
sentence with another value in most cases, another shape of the same relation in some, and says
"now" in a few. Values are names of places, languages, organisations and people (one word or
several), which the word rules read as capitalised names, not as numbers. ``--facts
bench/data/fact_sequence_everyday.json`` tells the same story in other words: a favourite
colour, a pet, a car, a job, an age, half of them values the rules read as plain lower-case words.

Each fact's question ("Which country is Aiko Tanaka a citizen of?") goes through ``recall``
(balanced, five results) over MCP on the embedded default. Reported: for an overridden fact, how
often the newest version is returned above every earlier one (and is the first result), and how
often it is returned at all; for a fact never overridden, how often it is the first result (newer
facts of its pattern about others are no versions of it); of remember's links, how many join a
fact to an earlier version of itself and how many to anything else (a false link: another
subject, or another relation of the same one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._client import session
from bench._server import ApiServer

TENANT: Final = "fact-sequence"

FACTS_FILE: Final = Path(__file__).resolve().parent / "data" / "fact_sequence.json"


@dataclass(frozen=True)
class Relation:
    name: str
    subjects: str  # "person" or "company"
    values: Sequence[str]
    shapes: Sequence[str]  # {S} the subject, {V} the value
    question: str


@dataclass(frozen=True)
class Facts:
    people: Sequence[str]
    companies: Sequence[str]
    relations: Sequence[Relation]


def load_facts(path: Path = FACTS_FILE) -> Facts:
    raw = json.loads(path.read_text())
    pools = raw["pools"]
    relations = [
        Relation(r["name"], r["subjects"], pools[r["values"]], r["shapes"], r["question"])
        for r in raw["relations"]
    ]
    return Facts(pools["people"], pools["companies"], relations)


# The share of (subject, relation) facts overridden, and of those overridden twice.
OVERRIDDEN: Final = 0.25
TWICE: Final = 0.2
# Of the overriding facts: how many use the other shape of the relation, and how many say "now".
OTHER_SHAPE: Final = 0.25
SAYS_NOW: Final = 0.15
# People first met among the overriding facts (one every third of them).
LATER_SUBJECTS: Final = 6


@dataclass
class Fact:
    subject: str
    relation: Relation
    value: str
    text: str
    memory_id: str = ""
    linked_to: str | None = None


@dataclass
class Chain:
    """One (subject, relation): its versions, oldest first."""

    versions: list[Fact] = field(default_factory=list)


def _sentence(shape: str, subject: str, value: str, *, now: bool) -> str:
    text = shape.format(S=subject, V=value)
    if now:
        # "… is now …", "… now works for …".
        if " is " in text:
            text = text.replace(" is ", " is now ", 1)
        else:
            for verb in (" works ", " plays ", " lives ", " holds ", " speaks "):
                if verb in text:
                    text = text.replace(verb, f" now{verb}", 1)
                    break
    return text[0].upper() + text[1:]


def sequence(
    subjects: int, seed: int, facts_file: Path = FACTS_FILE
) -> tuple[list[Fact], dict[tuple[str, str], Chain]]:
    """The facts in the order they are remembered, and each (subject, relation)'s versions."""
    rng = random.Random(seed)
    known = load_facts(facts_file)
    everyone = known.people
    people = everyone[:subjects]
    companies = known.companies[: max(3, subjects * len(known.companies) // len(everyone))]
    later_people = everyone[subjects:][:LATER_SUBJECTS]
    chains: dict[tuple[str, str], Chain] = {}

    def fact(subject: str, relation: Relation, *, exclude: set[str], shape: str, now: bool) -> Fact:
        value = rng.choice([v for v in relation.values if v not in exclude])
        made = Fact(subject, relation, value, _sentence(shape, subject, value, now=now))
        chains.setdefault((subject, relation.name), Chain()).versions.append(made)
        return made

    def first_facts(names: Sequence[str], kind: str) -> list[Fact]:
        return [
            fact(name, relation, exclude=set(), shape=relation.shapes[0], now=False)
            for name in names
            for relation in known.relations
            if relation.subjects == kind
        ]

    facts = first_facts(people, "person") + first_facts(companies, "company")
    rng.shuffle(facts)
    overridden = rng.sample(list(chains), round(OVERRIDDEN * len(chains)))
    updates: list[tuple[str, str]] = []
    for key in overridden:
        updates.append(key)
        if rng.random() < TWICE:
            updates.append(key)
    rng.shuffle(updates)
    later = first_facts(later_people, "person")
    rng.shuffle(later)
    for n, (subject, relation_name) in enumerate(updates):
        chain = chains[(subject, relation_name)]
        relation = chain.versions[0].relation
        shape = relation.shapes[1] if rng.random() < OTHER_SHAPE else relation.shapes[0]
        facts.append(
            fact(
                subject,
                relation,
                exclude={v.value for v in chain.versions},
                shape=shape,
                now=rng.random() < SAYS_NOW,
            )
        )
        if later and n % 3 == 2:
            facts.append(later.pop())
    facts.extend(later)
    return facts, chains


async def run(url: str, facts: list[Fact], chains: dict[tuple[str, str], Chain]) -> dict[str, Any]:
    overridden = {key: chain for key, chain in sorted(chains.items()) if len(chain.versions) > 1}
    kept = [chain.versions[0] for chain in chains.values() if len(chain.versions) == 1]
    async with session(url, TENANT) as client:
        for made in facts:
            result = await client.call_tool("remember", {"content": made.text})
            data = result.structured_content or {}
            if result.is_error or not data.get("stored", False):
                raise RuntimeError(f"not stored: {made.text!r}: {data}")
            made.memory_id = data["id"]
            made.linked_to = data.get("supersedes")

        async def recalled(made: Fact) -> list[str]:
            question = made.relation.question.format(S=made.subject)
            result = await client.call_tool("recall", {"query": question})
            return [r["id"] for r in (result.structured_content or {}).get("results", [])]

        # A fact never overridden must still come first: newer facts of its pattern about
        # other subjects are no versions of it.
        kept_first = [(await recalled(made))[:1] == [made.memory_id] for made in kept]
        rows = []
        for chain in overridden.values():
            relation = chain.versions[0].relation
            ids = await recalled(chain.versions[-1])
            newest, older = chain.versions[-1], chain.versions[:-1]
            positions = {
                f.memory_id: ids.index(f.memory_id) for f in chain.versions if f.memory_id in ids
            }
            returned = newest.memory_id in positions
            above = returned and all(
                positions[newest.memory_id] < positions.get(f.memory_id, len(ids)) for f in older
            )
            rows.append(
                {
                    "relation": relation.name,
                    "returned": returned,
                    "above": above,
                    "first": bool(ids) and ids[0] == newest.memory_id,
                    "miss": None
                    if above
                    else {"versions": [f.text for f in chain.versions], "ids_rank": positions},
                }
            )
    summary = _summary(facts, overridden, rows)
    summary["never_overridden_first"] = f"{sum(kept_first)}/{len(kept_first)}"
    return summary


def _summary(
    facts: list[Fact], chains: dict[tuple[str, str], Chain], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    earlier: dict[str, set[str]] = {}
    for chain in chains.values():
        for n, made in enumerate(chain.versions):
            earlier[made.memory_id] = {f.memory_id for f in chain.versions[:n]}
    links = [f for f in facts if f.linked_to]
    right = [f for f in links if f.linked_to in earlier.get(f.memory_id, set())]
    updates = sum(len(c.versions) - 1 for c in chains.values())
    by_relation = Counter(r["relation"] for r in rows)
    above_by_relation = Counter(r["relation"] for r in rows if r["above"])
    return {
        "facts": len(facts),
        "overridden": len(rows),
        "newest_above_every_older": sum(r["above"] for r in rows),
        "newest_first": sum(r["first"] for r in rows),
        "newest_returned": sum(r["returned"] for r in rows),
        "updates": updates,
        "linked_to_an_earlier_version": len(right),
        "false_links": len(links) - len(right),
        "false_link_texts": [
            [f.text, next((g.text for g in facts if g.memory_id == f.linked_to), "?")]
            for f in links
            if f not in right
        ],
        "by_relation": {
            name: f"{above_by_relation[name]}/{n}" for name, n in sorted(by_relation.items())
        },
        "misses": [r["miss"] for r in rows if r["miss"]],
    }


async def main(args: argparse.Namespace) -> None:
    facts, chains = sequence(args.subjects, args.seed, args.facts)
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="fact-sequence-"))
    server = await ApiServer.start(data_dir)
    try:
        summary = await run(server.url, facts, chains)
    finally:
        await server.stop()
    print(json.dumps(summary, indent=1))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subjects", type=int, default=36, help="people (companies in proportion)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--facts", type=Path, default=FACTS_FILE, help="people, companies and their relations"
    )
    parser.add_argument("--data-dir", type=Path, default=None)
    return parser


if __name__ == "__main__":
    asyncio.run(main(_parser().parse_args()))
