"""Corrections and expiry: does a corrected fact win, and what do the records cost?

- 50 (old fact, revised fact) pairs (bench/data/revisions.json) among 2,000 memories: 1,900
  fillers (the technical notes, DevBench's memories, then LoCoMo turns) preloaded, then each
  pair remembered over MCP, old first.
  - **With replaces**, the revised fact names the old one: default recall of the pair's
    question must return the revision and never the old fact.
  - **Without replaces** (only the revision remembered): the revision must rank above the old
    fact; and how often remember linked it as a probable update of the right memory (and how often
    it spoke up when an old fact was first stored, where there is nothing to update).
- Recall p50 over MCP at 10,000 memories on a plain tenant and on one that also holds 1,000
  replacement records and 1,000 expiring memories, measured in alternating rounds.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from bench._client import Latency, call_text, ids_in, parse_recall, run_load, session
from bench._data import Conversation, DevBench, MemoryTexts, TechNotes
from bench._inproc import Local, preload
from bench._server import ApiServer
from shared.model import iso_ms, parse_iso_ms
from shared.model.keys import expiry_key_of, index_key, replaced_key

REVISIONS_FILE: Final = Path(__file__).resolve().parent / "data" / "revisions.json"
DAY_MS: Final = 86_400_000


class RevisionPlan(msgspec.Struct, frozen=True, kw_only=True):
    pairs: int
    memories: int
    speed_memories: int
    records: int
    rounds: int
    calls_per_round: int


FULL: Final = RevisionPlan(
    pairs=50, memories=2000, speed_memories=10_000, records=1000, rounds=8, calls_per_round=200
)
SMOKE: Final = RevisionPlan(
    pairs=5, memories=60, speed_memories=60, records=10, rounds=2, calls_per_round=5
)


class Pair(msgspec.Struct, frozen=True):
    old: str
    revised: str
    query: str


def load_pairs(path: Path = REVISIONS_FILE) -> list[Pair]:
    raw = json.loads(path.read_text())
    return [Pair(p["old"], p["revised"], p["query"]) for p in raw["pairs"]]


def fillers(
    tech: TechNotes, devbench: DevBench, conversations: list[Conversation], count: int
) -> list[str]:
    texts = list(tech.notes.values()) + [m.content for m in devbench.memories]
    turns = MemoryTexts(conversations)
    texts += [turns.stored(i) for i in range(count)]
    return texts[:count]


async def _remember(client: Any, content: str, **extra: Any) -> tuple[str, str]:
    text = await call_text(client, "remember", {"content": content, **extra})
    return ids_in(text)[0], text


def outranks(ids: Sequence[str], winner: str, loser: str) -> bool:
    """``winner`` is returned, and above ``loser`` when both are."""
    if winner not in ids:
        return False
    return loser not in ids or ids.index(winner) < ids.index(loser)


async def _pairs_stage(
    local: Local, server: ApiServer, pairs: list[Pair], filler: list[str], *, replaces: bool
) -> dict[str, Any]:
    tenant = f"revisions-{'with' if replaces else 'without'}-replaces"
    count = len(filler)
    await preload(local, tenant, lambda i: filler[i], range(count), cache={})
    rows: list[dict[str, Any]] = []
    async with session(server.url, tenant) as client:
        for pair in pairs:
            old_id, old_text = await _remember(client, pair.old)
            revised_id, revised_text = await _remember(
                client, pair.revised, **({"replaces": old_id} if replaces else {})
            )
            rows.append(
                {
                    "old": old_id,
                    "revised": revised_id,
                    "link_on_old": "probably updates" in old_text,
                    "link_named_old": f"probably updates {old_id}" in revised_text,
                }
            )
        for pair, row in zip(pairs, rows, strict=True):
            recalled = parse_recall(await call_text(client, "recall", {"query": pair.query}))
            row["returned"] = recalled.ids
    n = len(rows)
    revised_wins = sum(outranks(r["returned"], r["revised"], r["old"]) for r in rows)
    result: dict[str, Any] = {
        "pairs": n,
        "memories": count + 2 * n,
        "revision_returned": sum(r["revised"] in r["returned"] for r in rows),
        "old_returned": sum(r["old"] in r["returned"] for r in rows),
        "revision_above_old": revised_wins,
    }
    if not replaces:
        result["link_named_old"] = sum(r["link_named_old"] for r in rows)
        result["link_on_first_store"] = sum(r["link_on_old"] for r in rows)
    return result


async def _seed_records(local: Local, tenant: str, ids: Sequence[str]) -> None:
    """Replacement records between the tenant's own memories (the first half of
    ``ids`` retired by the second), written as remember writes them."""
    half = len(ids) // 2
    for old_id, new_id in zip(ids[:half], ids[half:], strict=False):
        await local.stores.objects.put(replaced_key(tenant, old_id, new_id), "")


async def _seed_expiring(local: Local, tenant: str, ids: Sequence[str]) -> None:
    """Give these memories an expiry a year out: rewritten with expiresAt, its index key and
    its expiry key (what remember with expires_in_days writes)."""
    found = await local.stores.vectors.get(tenant, list(ids))
    for memory in found:
        later = msgspec.structs.replace(
            memory, expires_at=iso_ms(_created_ms(memory.created_at) + 365 * DAY_MS)
        )
        embedding = await local.embedder.embed(memory.content)
        await local.stores.objects.delete([index_key(memory)])
        await local.stores.vectors.put(later, embedding)
        await local.stores.objects.put(index_key(later), "")
        key = expiry_key_of(later)
        if key is not None:
            await local.stores.objects.put(key, "")


def _created_ms(created_at: str) -> int:
    parsed = parse_iso_ms(created_at)
    return parsed if parsed is not None else 0


async def _latency_stage(
    local: Local, server: ApiServer, texts: MemoryTexts, questions: list[str], plan: RevisionPlan
) -> dict[str, Any]:
    cache: dict[str, list[float]] = {}
    plain, marked = "revisions-speed-plain", "revisions-speed-marked"
    for tenant in (plain, marked):
        await preload(local, tenant, texts.stored, range(plan.speed_memories), cache=cache)
    keys = await local.stores.objects.list(f"index/{marked}/", limit=plan.speed_memories)
    ids = [key.rsplit("/", 1)[-1].split("#")[1] for key in keys]
    await _seed_records(local, marked, ids[: 2 * plan.records])
    await _seed_expiring(local, marked, ids[2 * plan.records : 3 * plan.records])
    p50: dict[str, list[float]] = {plain: [], marked: []}
    latencies: dict[str, list[Latency]] = {plain: [], marked: []}
    for round_number in range(plan.rounds):
        for tenant in (plain, marked) if round_number % 2 == 0 else (marked, plain):
            start = round_number * plan.calls_per_round
            calls = [
                ("recall", {"query": questions[i % len(questions)]})
                for i in range(start, start + plan.calls_per_round)
            ]
            load = await run_load(
                server.url, tenant, calls, concurrency=1, warmup=[("recall", {"query": "warm"})]
            )
            p50[tenant].append(load.latency.p50_ms)
            latencies[tenant].append(load.latency)
    return {
        "memories": plan.speed_memories,
        "replacement_records": plan.records,
        "expiring_memories": plan.records,
        "rounds": plan.rounds,
        "calls_per_round": plan.calls_per_round,
        "plain_p50_ms": p50[plain],
        "marked_p50_ms": p50[marked],
        "plain_p50_median_ms": round(statistics.median(p50[plain]), 2),
        "marked_p50_median_ms": round(statistics.median(p50[marked]), 2),
        "ratio": round(statistics.median(p50[marked]) / statistics.median(p50[plain]), 3),
    }


async def run_revisions(
    local: Local,
    server: ApiServer,
    *,
    tech: TechNotes,
    devbench: DevBench,
    conversations: list[Conversation],
    questions: list[str],
    smoke: bool,
    log: Any,
) -> dict[str, Any]:
    plan = SMOKE if smoke else FULL
    pairs = load_pairs()[: plan.pairs]
    filler = fillers(tech, devbench, conversations, plan.memories - 2 * len(pairs))
    log(f"revisions: {len(pairs)} pairs among {plan.memories:,} memories, with replaces")
    with_replaces = await _pairs_stage(local, server, pairs, filler, replaces=True)
    log("revisions: the same, remembered without replaces")
    without = await _pairs_stage(local, server, pairs, filler, replaces=False)
    log(f"revisions: recall p50 at {plan.speed_memories:,} memories with and without records")
    latency = await _latency_stage(local, server, MemoryTexts(conversations), questions, plan)
    return {"with_replaces": with_replaces, "without_replaces": without, "latency": latency}


__all__ = ["load_pairs", "outranks", "run_revisions"]
