"""Retrieval quality: LoCoMo turn-level recall@k per mode against plain cosine, and DevBench.

LoCoMo: one tenant per conversation, every turn remembered over HTTP as "speaker: text" in
order; the id each remember answers with (a new one, or the existing one when it says "already
known") maps back to the turn, so one memory may stand for several turns. Each recall
configuration then asks every question against its own copy of the tenant (same ids, no access
counts), because every recall records accesses that feed later rankings: sharing one tenant
would let one configuration's answers shape another's. Within a configuration questions are
asked in file order and accesses accumulate, as they would in use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from bench._client import call_text, ids_in, parse_recall, session
from bench._data import CATEGORY_NAMES, Conversation, DevBench, TechNotes
from bench._inproc import Local, copy_tenant, fused_order, plain_cosine
from bench._server import ApiServer
from shared.ranking import MODE_PROFILES, RecallMode

# (mode, limit); None is the mode's own default. limit 10 makes R@10 defined for every mode.
CONFIGS: Final[tuple[tuple[RecallMode, int | None], ...]] = (
    ("precision", None),
    ("precision", 10),
    ("balanced", None),
    ("balanced", 10),
    ("exploratory", None),
)
KS: Final = (1, 5, 10)
STORE_CONCURRENCY: Final = 2
ASK_CONCURRENCY: Final = 2
DEVBENCH_TYPES: Final[dict[str, str]] = {
    "decision": "project",
    "architecture": "project",
    "configuration": "project",
    "bug-fix": "pattern",
    "learning": "reference",
}


def config_name(mode: RecallMode, limit: int | None) -> str:
    return f"{mode}/{limit if limit is not None else MODE_PROFILES[mode].limit}" + (
        "" if limit is not None else " (default)"
    )


def _tenant(sample_id: str) -> str:
    return f"locomo-{sample_id}"


def _copy_tenant_name(base: str, mode: str, limit: int | None) -> str:
    return f"{base}.{mode}-{limit if limit is not None else 'default'}"


@dataclass
class Stored:
    """What remembering one conversation left: turn -> memory id and memory id -> turns."""

    turn_to_id: dict[str, str]
    id_to_turns: dict[str, set[str]]
    already_known: int


async def _store_conversation(url: str, conversation: Conversation) -> Stored:
    stored = Stored({}, {}, 0)
    async with session(url, _tenant(conversation.sample_id)) as client:
        for turn in conversation.turns:
            text = await call_text(client, "remember", {"content": turn.content})
            memory_id = ids_in(text)[0]
            stored.already_known += "Already known" in text
            stored.turn_to_id[turn.dia_id] = memory_id
            stored.id_to_turns.setdefault(memory_id, set()).add(turn.dia_id)
    return stored


def recall_at(ids: Sequence[str], evidence: Sequence[str], stored: Stored, k: int) -> float:
    covered: set[str] = set()
    for memory_id in ids[:k]:
        covered |= stored.id_to_turns.get(memory_id, set())
    return len(covered & set(evidence)) / len(evidence)


def _summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    for k in KS:
        summary[f"R@{k}"] = round(float(np.mean([r[f"R@{k}"] for r in rows])), 4) if rows else None
    if rows and "returned" in rows[0]:
        summary["mean_returned"] = round(float(np.mean([r["returned"] for r in rows])), 2)
        confidences = [r["confidence"] for r in rows]
        summary["confidence"] = {c: confidences.count(c) for c in sorted(set(confidences))}
    return summary


def _by_category(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        f"{cat} {name}": _summarise([r for r in rows if r["category"] == cat])
        for cat, name in CATEGORY_NAMES.items()
    }


async def _ask(url: str, tenant: str, questions: list[str], arguments: dict[str, Any]) -> list[str]:
    answers = []
    async with session(url, tenant) as client:
        for question in questions:
            answers.append(await call_text(client, "recall", {"query": question, **arguments}))
    return answers


async def _gathered(jobs: list[Any], limit: int) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def run(job: Any) -> Any:
        async with gate:
            return await job

    return await asyncio.gather(*(run(job) for job in jobs))


def evidence_accounting(conversations: list[Conversation]) -> dict[str, int]:
    questions = [q for c in conversations for q in c.questions]
    return {
        "questions_categories_1_4": len(questions),
        "empty_evidence_excluded": sum(not q.evidence.turns for q in questions),
        "malformed_evidence": sum(q.evidence.malformed for q in questions),
        "malformed_evidence_kept": sum(
            q.evidence.malformed and bool(q.evidence.turns) for q in questions
        ),
        "evidence_tokens_dropped": sum(len(q.evidence.dropped) for q in questions),
        "questions_scored": sum(bool(q.evidence.turns) for q in questions),
    }


async def run_locomo(
    local: Local, server: ApiServer, conversations: list[Conversation], log: Any
) -> dict[str, Any]:
    log(f"locomo: remembering {sum(len(c.turns) for c in conversations)} turns over HTTP")
    stored_list: list[Stored] = await _gathered(
        [_store_conversation(server.url, c) for c in conversations], STORE_CONCURRENCY
    )
    stored = dict(zip((c.sample_id for c in conversations), stored_list, strict=True))
    log("locomo: copying each conversation's tenant once per configuration")
    for conversation in conversations:
        base = _tenant(conversation.sample_id)
        ids = sorted(stored[conversation.sample_id].id_to_turns)
        targets = [_copy_tenant_name(base, mode, limit) for mode, limit in CONFIGS]
        await copy_tenant(local, base, targets, ids)
    scored = [(c, [q for q in c.questions if q.evidence.turns]) for c in conversations]

    log("locomo: plain cosine and fused-relevance top-10, in-process")
    cosine_rows: list[dict[str, Any]] = []
    fused_rows: list[dict[str, Any]] = []
    for conversation, questions in scored:
        tenant = _tenant(conversation.sample_id)
        texts = [q.text for q in questions]
        embeddings = await local.embedder.embed_many(texts)
        by_cosine = await plain_cosine(local, tenant, embeddings, k=10)
        by_fusion = await fused_order(local, tenant, texts, embeddings, k=10)
        for rows, ranked in ((cosine_rows, by_cosine), (fused_rows, by_fusion)):
            for question, ids in zip(questions, ranked, strict=True):
                row: dict[str, Any] = {"category": question.category}
                for k in KS:
                    row[f"R@{k}"] = recall_at(
                        ids, question.evidence.turns, stored[conversation.sample_id], k
                    )
                rows.append(row)

    per_config: dict[str, Any] = {}
    for mode, limit in CONFIGS:
        name = config_name(mode, limit)
        log(f"locomo: asking {sum(len(q) for _, q in scored)} questions, {name}")
        arguments: dict[str, Any] = {"mode": mode} | ({"limit": limit} if limit else {})
        answers = await _gathered(
            [
                _ask(
                    server.url,
                    _copy_tenant_name(_tenant(c.sample_id), mode, limit),
                    [q.text for q in questions],
                    arguments,
                )
                for c, questions in scored
            ],
            ASK_CONCURRENCY,
        )
        rows = []
        for (conversation, questions), texts in zip(scored, answers, strict=True):
            for question, text in zip(questions, texts, strict=True):
                recalled = parse_recall(text)
                row = {
                    "category": question.category,
                    "returned": len(recalled.ids),
                    "confidence": recalled.confidence,
                }
                for k in KS:
                    row[f"R@{k}"] = recall_at(
                        recalled.ids, question.evidence.turns, stored[conversation.sample_id], k
                    )
                rows.append(row)
        per_config[name] = {"all": _summarise(rows), "by_category": _by_category(rows)}

    return {
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "memories": sum(len(s.id_to_turns) for s in stored.values()),
        "already_known": sum(s.already_known for s in stored.values()),
        "evidence": evidence_accounting(conversations),
        "plain_cosine": {"all": _summarise(cosine_rows), "by_category": _by_category(cosine_rows)},
        "fused_order": {"all": _summarise(fused_rows), "by_category": _by_category(fused_rows)},
        "modes": per_config,
    }


async def run_devbench(
    local: Local, server: ApiServer, devbench: DevBench, log: Any
) -> dict[str, Any]:
    base = "devbench"
    by_memory: dict[str, str] = {}
    log(f"devbench: remembering {len(devbench.memories)} memories")
    async with session(server.url, base) as client:
        for memory in devbench.memories:
            text = await call_text(
                client,
                "remember",
                {
                    "content": memory.content,
                    "type": DEVBENCH_TYPES.get(memory.memory_type, "project"),
                    "category": memory.memory_type or None,
                    "tags": list(memory.tags),
                }
                if memory.memory_type
                else {"content": memory.content},
            )
            by_memory[ids_in(text)[0]] = memory.id
    modes = ("precision", "balanced", "exploratory")
    await copy_tenant(local, base, [f"{base}.{mode}" for mode in modes], sorted(by_memory))
    embeddings = await local.embedder.embed_many([q.question for q in devbench.queries])
    cosine = await plain_cosine(local, base, embeddings, k=10)
    results: dict[str, Any] = {
        "memories": len(devbench.memories),
        "queries": {
            c: sum(q.category == c for q in devbench.queries)
            for c in sorted({q.category for q in devbench.queries})
        },
        "modes": {},
    }
    for mode in modes:
        async with session(server.url, f"{base}.{mode}") as client:
            answers = [
                parse_recall(await call_text(client, "recall", {"query": q.question, "mode": mode}))
                for q in devbench.queries
            ]
        results["modes"][mode] = _devbench_scores(devbench, answers, by_memory)
    results["plain_cosine_top5"] = _devbench_cosine(devbench, cosine, by_memory, k=5)
    return results


def _devbench_scores(
    devbench: DevBench, answers: list[Any], by_memory: dict[str, str]
) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    categories = sorted({q.category for q in devbench.queries if q.expected})
    for category in categories:
        pairs = [
            (q, a) for q, a in zip(devbench.queries, answers, strict=True) if q.category == category
        ]
        hits = [bool({by_memory.get(i) for i in a.ids} & set(q.expected)) for q, a in pairs]
        top1 = [bool(a.ids) and by_memory.get(a.ids[0]) in q.expected for q, a in pairs]
        found = [
            len({by_memory.get(i) for i in a.ids} & set(q.expected)) / len(q.expected)
            for q, a in pairs
        ]
        scores[category] = {
            "queries": len(pairs),
            "hit_rate": round(float(np.mean(hits)), 3),
            "top1_hit_rate": round(float(np.mean(top1)), 3),
            "expected_found": round(float(np.mean(found)), 3),
        }
    negatives = [a for q, a in zip(devbench.queries, answers, strict=True) if not q.expected]
    confidences = [a.confidence for a in negatives]
    scores["negative"] = {
        "queries": len(negatives),
        "wrongly_confident": sum(c in ("high", "medium") for c in confidences),
        "high": confidences.count("high"),
        "medium": confidences.count("medium"),
        "not_confident": confidences.count("not_confident"),
        "no_match": confidences.count("no_match"),
    }
    return scores


def _devbench_cosine(
    devbench: DevBench, ranked: list[list[str]], by_memory: dict[str, str], *, k: int
) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    for category in sorted({q.category for q in devbench.queries if q.expected}):
        hits = [
            bool({by_memory.get(i) for i in ids[:k]} & set(q.expected))
            for q, ids in zip(devbench.queries, ranked, strict=True)
            if q.category == category
        ]
        scores[category] = {"queries": len(hits), "hit_rate": round(float(np.mean(hits)), 3)}
    return scores


TECH_CONFIGS: Final[tuple[tuple[RecallMode, int | None], ...]] = (
    ("balanced", None),
    ("exploratory", 10),
)


def _hit_rates(ranked: Sequence[Sequence[str]], answers: Sequence[set[str]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(answers)}
    for k in KS:
        found = [
            len(set(ids[:k]) & want) / len(want) for ids, want in zip(ranked, answers, strict=True)
        ]
        summary[f"R@{k}"] = round(float(np.mean(found)), 4) if found else None
    return summary


async def run_tech_notes(
    local: Local, server: ApiServer, tech: TechNotes, log: Any
) -> dict[str, Any]:
    """Long technical notes (median ~2,300 characters): recall against plain cosine and the
    fused order, on ordinary questions and on hard ones that share no distinctive word with
    their note (where BM25 alone is weaker than cosine)."""
    base = "technotes"
    by_note: dict[str, str] = {}
    log(f"technotes: remembering {len(tech.notes)} notes over HTTP")
    async with session(server.url, base) as client:
        for note_id, text in tech.notes.items():
            by_note[note_id] = ids_in(await call_text(client, "remember", {"content": text}))[0]
    to_note = {memory_id: note_id for note_id, memory_id in by_note.items()}
    targets = [_copy_tenant_name(base, mode, limit) for mode, limit in TECH_CONFIGS]
    await copy_tenant(local, base, targets, sorted(to_note))
    texts = [q.text for q in tech.questions]
    answers = [set(q.answers) for q in tech.questions]
    embeddings = await local.embedder.embed_many(texts)
    ranked: dict[str, list[list[str]]] = {
        "plain cosine top-10": await plain_cosine(local, base, embeddings, k=10),
        "fused relevance top-10": await fused_order(local, base, texts, embeddings, k=10),
    }
    for mode, limit in TECH_CONFIGS:
        name = f"recall {config_name(mode, limit)}"
        arguments: dict[str, Any] = {"mode": mode} | ({"limit": limit} if limit else {})
        replies = await _ask(server.url, _copy_tenant_name(base, mode, limit), texts, arguments)
        ranked[name] = [parse_recall(text).ids for text in replies]
    results: dict[str, Any] = {"notes": len(tech.notes), "retrieval": {}}
    for name, lists in ranked.items():
        as_notes = [[to_note.get(i, i) for i in ids] for ids in lists]
        results["retrieval"][name] = {
            kind: _hit_rates(
                [ids for ids, q in zip(as_notes, tech.questions, strict=True) if q.hard is hard],
                [a for a, q in zip(answers, tech.questions, strict=True) if q.hard is hard],
            )
            for kind, hard in (("ordinary", False), ("hard", True))
        }
    return results


__all__ = [
    "CONFIGS",
    "config_name",
    "evidence_accounting",
    "run_devbench",
    "run_locomo",
    "run_tech_notes",
]
