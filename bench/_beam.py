"""Retrieval quality on long technical chats: BEAM 500K dev, message-level recall@k per recall
configuration against plain cosine and the fused order, as the locomo stage measures LoCoMo.

One tenant per chat, every message remembered over HTTP as "role: content" in order (cut to the
content limit where longer, at a character boundary); the id each remember answers with (a new
one, or the existing one when it says "already known") maps back to the message, so one memory
may stand for several messages. Each recall configuration asks every question (those with
evidence and the abstention ones) against its own copy of the tenants, so the accesses one
configuration records never rank another's answers; within one, questions are asked in file order
and accesses accumulate.

Besides R@k: how many abstention questions (about something never discussed) come back HIGH;
among questions with evidence answered HIGH, how many put an evidence message first; for
knowledge updates, whether the updating message ranks above the one it updates; and how long the
answers are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from bench._client import call_text, ids_in, parse_recall, session
from bench._data import BeamChat, BeamQuestion
from bench._inproc import Local, copy_tenant, fused_order, plain_cosine
from bench._quality import ASK_CONCURRENCY, STORE_CONCURRENCY, _ask, _gathered, config_name
from bench._server import ApiServer
from shared.model import MAX_CONTENT_BYTES
from shared.ranking import MODE_PROFILES, RecallMode

# (mode, limit); None is the mode's own default (balanced 5, exploratory 10, precision 3).
BEAM_CONFIGS: Final[tuple[tuple[RecallMode, int | None], ...]] = (
    ("balanced", None),
    ("balanced", 10),
    ("exploratory", None),
    ("precision", None),
)
KS: Final = (1, 5, 10)
CHARS_PER_TOKEN: Final = 4
ABSTENTION: Final = "abstention"


def _tenant(chat: int) -> str:
    return f"beam-{chat}"


def _copy_name(base: str, mode: str, limit: int | None) -> str:
    return f"{base}.{mode}-{limit if limit is not None else 'default'}"


def _limit(mode: RecallMode, limit: int | None) -> int:
    return limit if limit is not None else MODE_PROFILES[mode].limit


def fitted(text: str) -> str:
    """``text`` cut to the content limit in UTF-8 bytes, never inside a character."""
    raw = text.encode()
    if len(raw) <= MAX_CONTENT_BYTES:
        return text
    return raw[:MAX_CONTENT_BYTES].decode(errors="ignore")


@dataclass
class StoredChat:
    """What remembering one chat left: message -> memory id and memory id -> messages."""

    message_to_id: dict[int, str]
    id_to_messages: dict[str, set[int]]
    already_known: int
    truncated: int

    def messages(self, ids: Sequence[str]) -> list[set[int]]:
        return [self.id_to_messages.get(memory_id, set()) for memory_id in ids]


async def _store_chat(url: str, chat: BeamChat) -> StoredChat:
    stored = StoredChat({}, {}, 0, 0)
    async with session(url, _tenant(chat.chat)) as client:
        for message in chat.messages:
            content = fitted(message.stored)
            stored.truncated += content != message.stored
            text = await call_text(client, "remember", {"content": content})
            memory_id = ids_in(text)[0]
            stored.already_known += "Already known" in text
            stored.message_to_id[message.id] = memory_id
            stored.id_to_messages.setdefault(memory_id, set()).add(message.id)
    return stored


def recall_at(returned: Sequence[set[int]], evidence: Sequence[int], k: int) -> float:
    """The fraction of the evidence messages behind the first ``k`` returned memories."""
    covered: set[int] = set().union(*returned[:k])
    return len(covered & set(evidence)) / len(evidence)


def position(returned: Sequence[set[int]], wanted: Sequence[int]) -> int:
    """Where the first memory standing for a ``wanted`` message is; past the end if none."""
    wanted_set = set(wanted)
    return next((i for i, m in enumerate(returned) if m & wanted_set), len(returned))


def update_first(returned: Sequence[set[int]], question: BeamQuestion) -> bool:
    """The updating message ranks above the original (neither returned: not first)."""
    return position(returned, question.updated) < position(returned, question.original)


def scored_update(question: BeamQuestion) -> bool:
    return bool(question.original and question.updated) and set(question.original) != set(
        question.updated
    )


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def _recall_summary(rows: list[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    for k in KS:
        summary[f"R@{k}"] = _mean([r[f"R@{k}"] for r in rows]) if k in ks else None
    return summary


def _by_kind(rows: list[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    kinds = dict.fromkeys(r["kind"] for r in rows)
    return {kind: _recall_summary([r for r in rows if r["kind"] == kind], ks) for kind in kinds}


def _reference_rows(
    questions: list[BeamQuestion], ranked: list[list[str]], stored: StoredChat
) -> list[dict[str, Any]]:
    rows = []
    for question, ids in zip(questions, ranked, strict=True):
        returned = stored.messages(ids)
        row: dict[str, Any] = {"kind": question.kind}
        row |= {f"R@{k}": recall_at(returned, question.evidence, k) for k in KS}
        rows.append(row)
    return rows


async def _references(
    local: Local, chats: list[BeamChat], stored: dict[int, StoredChat]
) -> dict[str, Any]:
    """Plain cosine and the fused order, top-10, in-process on each chat's stored tenant."""
    cosine_rows: list[dict[str, Any]] = []
    fused_rows: list[dict[str, Any]] = []
    for chat in chats:
        questions = [q for q in chat.questions if q.evidence]
        if not questions:
            continue
        tenant = _tenant(chat.chat)
        texts = [q.text for q in questions]
        embeddings = await local.embedder.embed_many(texts)
        by_cosine = await plain_cosine(local, tenant, embeddings, k=10)
        by_fusion = await fused_order(local, tenant, texts, embeddings, k=10)
        cosine_rows += _reference_rows(questions, by_cosine, stored[chat.chat])
        fused_rows += _reference_rows(questions, by_fusion, stored[chat.chat])
    return {
        name: {"all": _recall_summary(rows, KS), "by_kind": _by_kind(rows, KS)}
        for name, rows in (("plain_cosine", cosine_rows), ("fused_order", fused_rows))
    }


def _answer_row(question: BeamQuestion, text: str, stored: StoredChat) -> dict[str, Any]:
    recalled = parse_recall(text)
    returned = stored.messages(recalled.ids)
    row: dict[str, Any] = {
        "kind": question.kind,
        "confidence": recalled.confidence,
        "returned": len(recalled.ids),
        "chars": len(text),
    }
    if question.evidence:
        row |= {f"R@{k}": recall_at(returned, question.evidence, k) for k in KS}
        row["evidence_first"] = bool(returned) and bool(returned[0] & set(question.evidence))
    if scored_update(question):
        row["update_first"] = update_first(returned, question)
    return row


def _counts(values: Sequence[str]) -> dict[str, int]:
    return {value: values.count(value) for value in sorted(set(values))}


def _config_summary(rows: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    ks = [k for k in KS if k <= limit]
    answered = [r for r in rows if r["kind"] != ABSTENTION]
    abstained = [r for r in rows if r["kind"] == ABSTENTION]
    high = [r for r in answered if r["confidence"] == "high"]
    updates = [r["update_first"] for r in rows if "update_first" in r]
    chars = [r["chars"] for r in rows]
    mean_chars = float(np.mean(chars)) if chars else 0.0
    return {
        "limit": limit,
        "all": _recall_summary(answered, ks)
        | {
            "mean_returned": round(float(np.mean([r["returned"] for r in answered])), 2)
            if answered
            else None,
            "confidence": _counts([r["confidence"] for r in answered]),
        },
        "by_kind": _by_kind(answered, ks),
        "high_precision": {
            "high": len(high),
            "evidence_first": sum(r["evidence_first"] for r in high),
        },
        "abstention": {
            "questions": len(abstained),
            "confidence": _counts([r["confidence"] for r in abstained]),
            "high": sum(r["confidence"] == "high" for r in abstained),
        },
        "updates": {"scored": len(updates), "update_first": sum(updates)},
        "answer_size": {
            "answers": len(chars),
            "mean_chars": round(mean_chars, 1),
            "mean_tokens_est": round(mean_chars / CHARS_PER_TOKEN, 1),
        },
    }


async def _ask_config(
    server: ApiServer,
    chats: list[BeamChat],
    stored: dict[int, StoredChat],
    mode: RecallMode,
    limit: int | None,
) -> dict[str, Any]:
    arguments: dict[str, Any] = {"mode": mode} | ({"limit": limit} if limit else {})
    answers = await _gathered(
        [
            _ask(
                server.url,
                _copy_name(_tenant(chat.chat), mode, limit),
                [q.text for q in chat.questions],
                arguments,
            )
            for chat in chats
        ],
        ASK_CONCURRENCY,
    )
    rows = [
        _answer_row(question, text, stored[chat.chat])
        for chat, texts in zip(chats, answers, strict=True)
        for question, text in zip(chat.questions, texts, strict=True)
    ]
    return _config_summary(rows, _limit(mode, limit))


def _question_accounting(chats: list[BeamChat]) -> dict[str, Any]:
    questions = [q for chat in chats for q in chat.questions]
    with_both = [q for q in questions if q.original and q.updated]
    return {
        "questions": len(questions),
        "with_evidence": sum(bool(q.evidence) for q in questions),
        "abstention": sum(q.kind == ABSTENTION for q in questions),
        "by_kind": _counts([q.kind for q in questions]),
        "updates_with_original_and_updated": len(with_both),
        "updates_skipped_same_messages": sum(not scored_update(q) for q in with_both),
        "updates_scored": sum(scored_update(q) for q in with_both),
    }


async def run_beam(
    local: Local, server: ApiServer, chats: list[BeamChat], log: Any
) -> dict[str, Any]:
    log(f"beam: remembering {sum(len(c.messages) for c in chats):,} messages over HTTP")
    stored_list: list[StoredChat] = await _gathered(
        [_store_chat(server.url, chat) for chat in chats], STORE_CONCURRENCY
    )
    stored = dict(zip((c.chat for c in chats), stored_list, strict=True))
    log("beam: copying each chat's tenant once per configuration")
    for chat in chats:
        base = _tenant(chat.chat)
        targets = [_copy_name(base, mode, limit) for mode, limit in BEAM_CONFIGS]
        await copy_tenant(local, base, targets, sorted(stored[chat.chat].id_to_messages))
    log("beam: plain cosine and fused-relevance top-10, in-process")
    results: dict[str, Any] = {
        "chats": len(chats),
        "messages": sum(len(c.messages) for c in chats),
        "memories": sum(len(s.id_to_messages) for s in stored.values()),
        "already_known": sum(s.already_known for s in stored.values()),
        "truncated": sum(s.truncated for s in stored.values()),
        "content_limit_bytes": MAX_CONTENT_BYTES,
        "evidence": _question_accounting(chats),
        **await _references(local, chats, stored),
        "modes": {},
    }
    for mode, limit in BEAM_CONFIGS:
        name = config_name(mode, limit)
        log(f"beam: asking {results['evidence']['questions']} questions, {name}")
        results["modes"][name] = await _ask_config(server, chats, stored, mode, limit)
    return results


__all__ = ["BEAM_CONFIGS", "fitted", "position", "recall_at", "run_beam", "update_first"]
