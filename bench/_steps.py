"""Recall's steps timed one by one, in the order ``shared.operations.recall`` runs them, against
the same stores and model: each step is timed alone (its inputs computed by the steps before it,
outside its clock), and beside them recall whole, the tool whole in this process and the server's
MCP framing of its answer, so the sum can be read against the whole.

What runs beside the embedding in recall (the keyword scoring, the counters, the replacement
records) is timed alone here too: their sum is an upper bound of what a recall pays for them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import msgspec

from bench._framing import Framing
from bench._inproc import Local
from services.api.tools.catalogue import guarded
from services.api.tools.definition import ToolContext, ToolResult
from services.api.tools.recall import RECALL
from services.api.tools.recall_text import render_recall
from shared.counters import CounterTracker
from shared.embedding.recent import RecentVectors
from shared.memories.visibility import Visibility
from shared.operations.fusion import fuse, with_feedback
from shared.operations.recall import (
    KEYWORD_CANDIDATES,
    RECALL_CANDIDATES,
    RecallAnswer,
    kept,
    newer_versions,
    recall,
    reranked,
)
from shared.ranking import MODE_PROFILES, rank


@dataclass(frozen=True)
class StepTimes:
    """Per-recall seconds of each step (balanced mode)."""

    embed: list[float] = field(default_factory=list)
    vector_query: list[float] = field(default_factory=list)
    keyword_scoring: list[float] = field(default_factory=list)
    counters_cached: list[float] = field(default_factory=list)
    counters_cold: list[float] = field(default_factory=list)
    replacements: list[float] = field(default_factory=list)
    first_fusion: list[float] = field(default_factory=list)
    bodies: list[float] = field(default_factory=list)
    feedback: list[float] = field(default_factory=list)
    newer_versions: list[float] = field(default_factory=list)
    rank: list[float] = field(default_factory=list)
    render: list[float] = field(default_factory=list)
    structured: list[float] = field(default_factory=list)
    mcp_framing: list[float] = field(default_factory=list)
    recall_whole: list[float] = field(default_factory=list)
    tool_whole: list[float] = field(default_factory=list)

    def names(self) -> list[str]:
        return [f.name for f in fields(self)]


# The steps a recall cannot do without: the "unavoidable" ones.
UNAVOIDABLE = ("embed", "vector_query", "keyword_scoring", "mcp_framing")
# The wholes, read against the sum of the steps rather than added to it.
WHOLES = ("recall_whole", "tool_whole")


async def recall_steps(local: Local, tenant: str, queries: Sequence[str]) -> StepTimes:
    """Time each of recall's steps alone, then recall and the tool whole (see the module)."""
    steps = StepTimes()
    framing = Framing(RECALL.output_schema)
    # No question's vector kept: each whole pays its embedding, as a question not asked lately.
    ops = msgspec.structs.replace(
        local.ops, questions=RecentVectors(local.ops.embedder, capacity=0)
    )
    tool = guarded(RECALL, ops)
    context = ToolContext(tenant=tenant)
    for query in queries:
        result = await _one(local, tenant, query, steps)
        steps.mcp_framing.append(await framing.timed(query, result))
        started = time.perf_counter()
        await recall(ops, tenant, None, query=query, mode="balanced", limit=5)
        steps.recall_whole.append(time.perf_counter() - started)
        started = time.perf_counter()
        await tool.handler(context, {"query": query})
        steps.tool_whole.append(time.perf_counter() - started)
    return steps


class _Clock:
    def __init__(self) -> None:
        self._at = time.perf_counter()

    def lap(self, into: list[float]) -> None:
        now = time.perf_counter()
        into.append(now - self._at)
        self._at = time.perf_counter()


async def _one(local: Local, tenant: str, query: str, steps: StepTimes) -> ToolResult:
    """One query through recall's steps; the tool's result, for the framing."""
    ops, profile = local.ops, MODE_PROFILES["balanced"]
    clock = _Clock()
    embedding = await local.embedder.embed(query)
    clock.lap(steps.embed)
    hits = await local.stores.vectors.query(tenant, embedding, top_k=RECALL_CANDIDATES)
    visible = [hit for hit in hits if hit.memory.visible_to(None)]
    clock.lap(steps.vector_query)
    scored = await ops.lexicon.query(tenant, query)
    scored.best(KEYWORD_CANDIDATES)  # as recall does while the query is embedded
    clock.lap(steps.keyword_scoring)
    counts = await ops.counters.load(tenant)
    clock.lap(steps.counters_cached)
    cold = CounterTracker(local.stores.objects, process_id="bench-cold", compact_threshold=20)
    await cold.load(tenant)
    clock.lap(steps.counters_cold)
    retired = await ops.replacements.view(tenant)
    visibility = Visibility(None, now_ms=ops.clock_ms(), replacements=retired)
    clock.lap(steps.replacements)
    keyword = scored.result(top_k=KEYWORD_CANDIDATES, include=[h.memory.id for h in visible])
    first = fuse(visible, keyword, floor=ops.floor)
    clock.lap(steps.first_fusion)
    candidates = await kept(ops, tenant, visibility, first, limit=profile.limit)
    clock.lap(steps.bodies)
    fed_back = with_feedback(reranked(candidates, limit=profile.limit), scored, floor=ops.floor)
    clock.lap(steps.feedback)
    found, links = await newer_versions(ops, tenant, visibility, fed_back, limit=profile.limit)
    clock.lap(steps.newer_versions)
    outcome = rank(
        found,
        counts,
        profile=profile,
        limit=profile.limit,
        floor=ops.floor,
        high_similarity=ops.high_similarity,
        now_ms=visibility.now_ms,
        names_absent=scored.absent_names > 0,
        links=links,
    )
    clock.lap(steps.rank)
    answer = RecallAnswer(mode="balanced", visible=len(fed_back), outcome=outcome)
    reply = render_recall(query, answer, max_tokens=profile.max_tokens)
    clock.lap(steps.render)
    structured = msgspec.to_builtins(reply.data)
    clock.lap(steps.structured)
    return ToolResult(text=reply.text, structured=structured)


__all__ = ["UNAVOIDABLE", "WHOLES", "StepTimes", "recall_steps"]
