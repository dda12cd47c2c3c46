"""Update pairs and same-pattern distractors, generated: does remember link what it should?

Each *update* is an older fact and a newer one about the same subject with another value (a
port, a version, an owner, a day, a database, a build tool, a count, a duration, a host, a
date, a negation), in one of several sentence shapes, the newer either in the same shape or in
an announcing one ("X moved to …", "we switched X from … to …"). Each *distractor* is a pair
that must not be linked:

- ``other_subject``: the same shape about another subject, same or other value ("Anna was born
  in Oslo." / "Omar was born in Oslo.");
- ``other_subject_announced``: another subject said to have changed ("the admin dashboard
  moved to port 9090" beside "the API listens on port 8080");
- ``other_attribute``: the same subject, another attribute ("the API listens on port 8080" /
  "the API times out after 30 seconds");
- ``other_attribute_announced``: the same subject, another figure said to be so now ("the
  mobile app build runs on Node 18." / "the mobile app build's image is about 300 MB now.");
- ``addition``: the same subject gaining a second value ("… also uses …");
- ``other_time``: the newer value said of another time than now ("Back in 2021, the API
  listens on port 9090.", "We might change it so that …", "This week only, …").

``--long`` wraps each sentence in a paragraph of unrelated sentences (chat-like text).

    python bench/supersede_pairs.py                 # remember's rules on every pair: rates
    python bench/supersede_pairs.py --long          # the same, long texts
    python bench/supersede_pairs.py --words-only    # the word rules alone (no model)

Remember's rules are the word rules (``shared.ranking.updates``) and, between long texts where
they say no, the restated-figure rule (``shared.ranking.figures``, with the local model).
    python bench/supersede_pairs.py --dump FILE     # the pairs as JSON, for the served run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Final

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._figures import remember_links

SEED: Final = 20261203


class Pair(msgspec.Struct, frozen=True, kw_only=True):
    kind: str  # "update" or a distractor's kind
    slot: str
    older: str
    newer: str
    query: str


# Each slot: subjects, values, the shapes that state a value, the announcing shapes, a query.
SLOTS: Final[dict[str, dict[str, list[str]]]] = {
    "port": {
        "subjects": [
            "the API",
            "the admin dashboard",
            "the metrics exporter",
            "the auth proxy",
            "the payment gateway",
            "the search service",
            "the websocket server",
        ],
        "values": ["8080", "8443", "9090", "3000", "5000", "7001", "9100", "4000"],
        "shapes": [
            "{S} listens on port {V}.",
            "{S} runs on port {V} in staging.",
            "Port {V} is where {S} accepts connections.",
        ],
        "announce": [
            "{S} moved to port {V}.",
            "We changed the port of {S} to {V}.",
            "{S} now listens on port {V}.",
        ],
        "query": ["which port does {S} listen on?", "what port is {S} on"],
    },
    "version": {
        "subjects": [
            "the backend",
            "the ingest worker",
            "the CI image",
            "the mobile app build",
            "the data pipeline",
            "the scheduler",
        ],
        "values": [
            "Python 3.10",
            "Python 3.12",
            "Node 18",
            "Node 22",
            "Java 17",
            "Java 21",
            "Go 1.21",
            "Go 1.23",
        ],
        "shapes": ["{S} runs on {V}.", "{S} is built against {V}.", "We use {V} for {S}."],
        "announce": [
            "{S} was upgraded to {V}.",
            "{S} now runs on {V}.",
            "We moved {S} to {V} last sprint.",
        ],
        "query": ["which runtime version does {S} use?", "what version is {S} on"],
    },
    "owner": {
        "subjects": [
            "the billing service",
            "the release process",
            "the on-call rotation",
            "the design system",
            "the data warehouse",
            "the security review",
        ],
        "values": ["Maria", "Tom", "Priya", "Kenji", "Lucas", "Fatima", "Oleg", "Grace"],
        "shapes": ["{V} owns {S}.", "{S} is owned by {V}.", "Questions about {S} go to {V}."],
        "announce": ["{V} took over {S}.", "{S} is now owned by {V}.", "{V} owns {S} now."],
        "query": ["who owns {S}?", "who is responsible for {S}"],
    },
    "weekday": {
        "subjects": [
            "the team standup",
            "the sprint review",
            "the deploy freeze",
            "the backlog grooming",
            "the architecture sync",
            "the retro",
        ],
        "values": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
        "shapes": ["{S} is on {V}.", "{S} happens every {V}.", "We hold {S} on {V} mornings."],
        "announce": ["{S} moved to {V}.", "{S} is on {V} now.", "From now on {S} is on {V}."],
        "query": ["when is {S}?", "which day is {S}"],
    },
    "database": {
        "subjects": [
            "the main application",
            "the analytics service",
            "the user service",
            "the order system",
            "the audit log",
        ],
        "values": ["MySQL", "PostgreSQL", "MongoDB", "SQLite", "DynamoDB", "CockroachDB"],
        "shapes": [
            "{S} stores its data in {V}.",
            "The database behind {S} is {V}.",
            "{S} uses {V} as its database.",
        ],
        "announce": [
            "{S} was migrated to {V}.",
            "We switched {S} to {V}.",
            "{S} now stores its data in {V}.",
        ],
        "query": ["which database does {S} use?", "where does {S} store its data"],
    },
    "build": {
        "subjects": [
            "the frontend",
            "the docs site",
            "the component library",
            "the admin UI",
            "the landing page",
        ],
        "values": ["webpack", "vite", "esbuild", "rollup", "parcel", "turbopack"],
        "shapes": [
            "{S} is built with {V}.",
            "We bundle {S} with {V}.",
            "The build of {S} runs through {V}.",
        ],
        "announce": [
            "{S} is built with {V} since the rewrite.",
            "We replaced the bundler of {S} with {V}.",
            "{S} now builds with {V}.",
        ],
        "query": ["what builds {S}?", "which bundler does {S} use"],
    },
    "count": {
        "subjects": [
            "the webhook dispatcher",
            "the payment retry job",
            "the email sender",
            "the sync worker",
            "the import job",
        ],
        "values": ["3", "5", "7", "10", "two", "four"],
        "shapes": [
            "{S} retries a failed call {V} times.",
            "{S} gives up after {V} attempts.",
            "{S} makes {V} attempts before it alerts.",
        ],
        "announce": [
            "{S} now retries {V} times.",
            "We raised the retries of {S} to {V}.",
            "After the incident {S} retries {V} times.",
        ],
        "query": ["how many times does {S} retry?", "retry count of {S}"],
    },
    "duration": {
        "subjects": [
            "the session cookie",
            "the cache",
            "the password reset link",
            "the API token",
            "the upload URL",
        ],
        "values": ["5 minutes", "15 minutes", "1 hour", "12 hours", "7 days", "30 days"],
        "shapes": [
            "{S} expires after {V}.",
            "The lifetime of {S} is {V}.",
            "{S} stays valid for {V}.",
        ],
        "announce": [
            "{S} now expires after {V}.",
            "We shortened {S} to {V}.",
            "{S} was changed to expire after {V}.",
        ],
        "query": ["how long does {S} last?", "when does {S} expire"],
    },
    "host": {
        "subjects": [
            "the staging environment",
            "the package registry",
            "the status page",
            "the internal wiki",
            "the artifact store",
        ],
        "values": [
            "staging.example.com",
            "stage2.example.com",
            "registry.acme.io",
            "pkg.acme.dev",
            "status.acme.io",
            "wiki.acme.internal",
        ],
        "shapes": ["{S} lives at {V}.", "{S} is reached at {V}.", "The address of {S} is {V}."],
        "announce": ["{S} moved to {V}.", "{S} is now at {V}.", "We migrated {S} to {V}."],
        "query": ["where is {S}?", "what is the address of {S}"],
    },
    "date": {
        "subjects": [
            "the beta launch",
            "the contract renewal",
            "the code freeze",
            "the security audit",
            "the data migration",
        ],
        "values": ["March 3", "April 14", "May 20", "June 1", "September 9", "October 30"],
        "shapes": ["{S} is planned for {V}.", "{S} happens on {V}.", "We scheduled {S} for {V}."],
        "announce": [
            "{S} was moved to {V}.",
            "{S} is now planned for {V}.",
            "We postponed {S} to {V}.",
        ],
        "query": ["when is {S}?", "what date is {S}"],
    },
    "person": {
        "subjects": ["Anna", "Omar", "Lena", "Ravi", "Sofia", "Marco", "Yuki", "Ines"],
        "values": ["Oslo", "Lisbon", "Berlin", "Nairobi", "Toronto", "Osaka"],
        "shapes": ["{S} was born in {V}.", "{S} lives in {V}.", "{S} works from {V}."],
        "announce": ["{S} moved to {V}.", "{S} lives in {V} now.", "{S} relocated to {V}."],
        "query": ["where does {S} live?", "which city is {S} in"],
    },
}
# The same subject, another attribute (never an update of the first).
OTHER_ATTRIBUTE: Final = [
    "{S} times out after 30 seconds.",
    "{S} logs to stdout in JSON.",
    "{S} is deployed with Helm.",
    "{S} has an on-call runbook in the wiki.",
    "{S} is monitored by Grafana.",
]
# The same subject, another figure, said to be so now: a change, but not of the first fact.
OTHER_ATTRIBUTE_ANNOUNCED: Final = [
    "{S} now uses 4 GB of memory.",
    "{S} is capped at 200 requests per minute now.",
    "{S} runs 6 replicas now.",
    "{S}'s image is about 300 MB now.",
    "{S} now answers in 40 ms at p99.",
    "{S} now keeps its logs for 30 days.",
]
# The newer value said of before, of maybe or of once: no update of what is so now.
OTHER_TIMES: Final = [
    "Back in 2021, {F}",
    "Before the reorg, {F}",
    "We might change it so that {F}",
    "Maybe next quarter {F}",
    "This week only, {F}",
]
NEGATIONS: Final = [
    ("{S} sends its logs to Datadog.", "{S} no longer sends its logs to Datadog."),
    ("{S} is behind the VPN.", "{S} is not behind the VPN anymore."),
    ("{S} runs database migrations on boot.", "{S} does not run database migrations on boot."),
]
FILLER: Final = [
    "I have been looking at the dashboards this morning and nothing else stands out.",
    "The team agreed to keep the pull requests small so that reviews stay quick.",
    "Let me know if anything in the plan looks off before we share it more widely.",
    "We should also write down the steps in the runbook once this is settled.",
    "There was a short discussion about naming but we kept the current names.",
    "I will follow up with the vendor about the invoice next week.",
    "Tests are green on the main branch and the coverage report looks fine.",
    "Someone asked whether we could add dark mode to the settings page later.",
]


def _fill(shape: str, subject: str, value: str) -> str:
    text = shape.format(S=subject, V=value)
    return text[0].upper() + text[1:]


def _said_within(shape: str, subject: str, value: str) -> str:
    """The fact as a clause after an opening: a name keeps its capital, "The API" does not."""
    text = _fill(shape, subject, value)
    if shape.startswith("{S}") and subject[:1].isupper():
        return text
    return text[0].lower() + text[1:]


def _long(rng: random.Random, sentence: str) -> str:
    before = rng.sample(FILLER, 3)
    after = rng.sample([f for f in FILLER if f not in before], 3)
    return " ".join([*before, sentence, *after])


def generate(*, per_slot: int = 24, long: bool = False, seed: int = SEED) -> list[Pair]:
    rng = random.Random(seed)
    # The announced other attributes draw from their own generator, so that every other pair
    # is the one earlier runs drew.
    aside = random.Random(seed + 1)
    later = random.Random(seed + 2)
    pairs: list[Pair] = []

    def add(
        kind: str, slot: str, older: str, newer: str, query: str, draw: random.Random = rng
    ) -> None:
        if long:
            older, newer = _long(draw, older), _long(draw, newer)
        pairs.append(Pair(kind=kind, slot=slot, older=older, newer=newer, query=query))

    for slot, spec in SLOTS.items():
        for _ in range(per_slot):
            subject, other = rng.sample(spec["subjects"], 2)
            v1, v2 = rng.sample(spec["values"], 2)
            shape = rng.choice(spec["shapes"])
            newer_shape = rng.choice([shape, *spec["announce"]])
            query = _fill(rng.choice(spec["query"]), subject, "")
            if slot != "person":
                add(
                    "update",
                    slot,
                    _fill(shape, subject, v1),
                    _fill(newer_shape, subject, v2),
                    query,
                )
            else:
                add(
                    "update",
                    slot,
                    _fill(shape, subject, v1),
                    _fill(rng.choice(spec["announce"]), subject, v2),
                    query,
                )
            same_value = rng.random() < 0.5
            add(
                "other_subject",
                slot,
                _fill(shape, subject, v1),
                _fill(shape, other, v1 if same_value else v2),
                query,
            )
            add(
                "other_subject_announced",
                slot,
                _fill(shape, subject, v1),
                _fill(rng.choice(spec["announce"]), other, v2),
                query,
            )
            add(
                "other_attribute",
                slot,
                _fill(shape, subject, v1),
                _fill(rng.choice(OTHER_ATTRIBUTE), subject, ""),
                query,
            )
            add(
                "other_attribute_announced",
                slot,
                _fill(shape, subject, v1),
                _fill(aside.choice(OTHER_ATTRIBUTE_ANNOUNCED), subject, ""),
                query,
                aside,
            )
            add(
                "addition",
                slot,
                _fill(shape, subject, v1),
                _fill(shape, subject, v2).rstrip(".") + " as well.",
                query,
            )
            add(
                "other_time",
                slot,
                _fill(shape, subject, v1),
                later.choice(OTHER_TIMES).format(F=_said_within(shape, subject, v2)),
                query,
                later,
            )
    subjects = [s for spec in SLOTS.values() for s in spec["subjects"] if s[0].islower()]
    for _ in range(per_slot * 2):
        subject = rng.choice(subjects)
        said, unsaid = rng.choice(NEGATIONS)
        add(
            "update",
            "negation",
            _fill(said, subject, ""),
            _fill(unsaid, subject, ""),
            _fill("what about {S}?", subject, ""),
        )
    return pairs


def rates(pairs: list[Pair], found: list[bool]) -> dict[str, dict[str, float | int]]:
    linked: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for pair, link in zip(pairs, found, strict=True):
        total[pair.kind] += 1
        linked[pair.kind] += link
    return {
        kind: {
            "pairs": total[kind],
            "linked": linked[kind],
            "rate": round(linked[kind] / total[kind], 3),
        }
        for kind in sorted(total)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="wrap each fact in a paragraph")
    parser.add_argument("--per-slot", type=int, default=24)
    parser.add_argument("--dump", type=Path, help="write the pairs as JSON here")
    parser.add_argument("--misses", action="store_true", help="print what was decided wrongly")
    parser.add_argument("--words-only", action="store_true", help="the word rules alone")
    args = parser.parse_args()
    pairs = generate(per_slot=args.per_slot, long=args.long)
    if args.dump:
        args.dump.write_text(json.dumps([msgspec.to_builtins(p) for p in pairs], indent=1))
    texts = [(pair.newer, pair.older) for pair in pairs]
    found = asyncio.run(remember_links(texts, words_only=args.words_only))
    print(json.dumps(rates(pairs, found), indent=1))
    if args.misses:
        for pair, link in zip(pairs, found, strict=True):
            if link != (pair.kind == "update"):
                print(f"{pair.kind:16} {pair.older!r} -> {pair.newer!r}")


if __name__ == "__main__":
    main()
