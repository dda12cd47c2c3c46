"""remember: store a fact, or answer the visible memory that already says it.

With ``replaces`` the named memory is retired by a replacement record written after the fact (a
crash in between leaves both visible, as before the correction, never neither). The replaced
memory is no "already known" answer; another memory that says the fact already is, and becomes
the replacement.

Without it, a visible memory the fact probably updates (``shared.ranking.updates``, or
``shared.ranking.figures`` for a figure restated in other words) is linked by a record written
after the fact: it stays current, ranked below the new one (a crash in between leaves two
unlinked memories, which recall and list agree on). ``link_updates`` False links nothing, and
undoes the links that name a memory already saying the fact as the newer one: the caller says
both stay current.
"""

from __future__ import annotations

import asyncio
from typing import Final

import msgspec

from shared.errors import EmbeddingError
from shared.memories import write_memory
from shared.memories.repairs import ensure_listed
from shared.memories.visibility import Visibility, may_replace, replaceable
from shared.model import Draft, Hit, Memory, new_memory
from shared.operations.context import OperationsContext
from shared.ranking import already_known, probably_updated
from shared.ranking.figures import figure_candidates, first_restated

# The nearest memories remember compares a new fact with: the one that already says it (dedup
# looks at the nearest), or the one it probably updates (more links no more of the revision
# pairs and costs remember time: docs/calibration.md).
NEIGHBOUR_CANDIDATES: Final = 5


class RememberAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``replaced``: the memory this one retired; ``supersedes``: the memory this one probably
    updates (linked: it stays current, ranked below this one); ``kept``: the memories whose
    links to this one were undone (``supersedes: false`` on a fact already known)."""

    memory: Memory
    already_known: bool
    replaced: Memory | None = None
    supersedes: Memory | None = None
    kept: tuple[str, ...] = ()


async def remember(
    ops: OperationsContext,
    tenant: str,
    conversation: str | None,
    draft: Draft,
    *,
    replaces: str | None = None,
    expires_in_days: int | None = None,
    link_updates: bool = True,
) -> RememberAnswer:
    """The fact ``draft`` files stored, or the memory that says it already (see the module
    docstring).

    Raises:
        InvalidInputError: ``replaces`` names no memory this request may replace.
    """
    embedding = ops.start_embedding(draft.content)
    visibility, live = await _live_neighbours(ops, tenant, conversation, embedding)
    replaced = None
    if replaces is not None:
        replaced = await replaceable(ops.vectors, tenant, visibility, replaces, scope=draft.scope)
        live = [hit for hit in live if hit.memory.id != replaced.id]
    known = already_known(draft.content, live)
    if known is not None and (replaced is None or may_replace(known.memory, replaced)):
        return await _already_known(
            ops, known.memory, replaced, visibility=visibility, link_updates=link_updates
        )
    memory = new_memory(
        tenant, conversation, draft, expires_in_days=expires_in_days, now_ms=visibility.now_ms
    )
    linking = replaced is None and link_updates
    return await _stored(
        ops,
        memory,
        embedding.result(),
        replaced=replaced,
        neighbours=live if linking else [],
    )


async def _stored(
    ops: OperationsContext,
    memory: Memory,
    embedding: list[float],
    *,
    replaced: Memory | None,
    neighbours: list[Hit],
) -> RememberAnswer:
    """Keys, vector (shared.memories), then the lexicon (a memory whose lexicon shard is
    missing is still recalled by the vector leg), then the record retiring ``replaced`` or
    linking the neighbour the memory probably updates. Which one that is matters only to the
    link, written last, so the text rules read the neighbours while the store writes."""
    writing = asyncio.create_task(write_memory(ops.objects, ops.vectors, memory, embedding))
    await asyncio.sleep(0)  # the write's first request is on its way before the rules run
    try:
        found = await _probably_updated(ops, memory, neighbours) if neighbours else None
    finally:
        await writing
    updated = found.memory if found is not None else None
    await ops.lexicon.added(memory)
    if replaced is not None:
        await ops.replacements.record(memory.tenant, replaced.id, memory.id)
    elif updated is not None:
        await ops.replacements.record(memory.tenant, updated.id, memory.id, "supersedes")
    return RememberAnswer(memory=memory, already_known=False, replaced=replaced, supersedes=updated)


async def _probably_updated(
    ops: OperationsContext, memory: Memory, neighbours: list[Hit]
) -> Hit | None:
    """The neighbour ``memory`` probably updates: by the text rules, or, between long texts
    where the words say no, a figure restated in other words (``shared.ranking.figures``): the
    few sentences that hold it are embedded, only then. Without those embeddings the link is
    left out, never the memory."""
    found = probably_updated(memory.content, neighbours, scope=memory.scope)
    if found is not None:
        return found
    candidates = figure_candidates(memory.content, neighbours, scope=memory.scope)
    if not candidates:
        return None
    sentences = sorted({s for _, pairs in candidates for pair in pairs for s in pair})
    try:
        vectors = await ops.embedder.embed_many(sentences)
    except EmbeddingError:
        return None
    return first_restated(candidates, dict(zip(sentences, vectors, strict=True)))


async def _live_neighbours(
    ops: OperationsContext,
    tenant: str,
    conversation: str | None,
    embedding: asyncio.Task[list[float]],
) -> tuple[Visibility, list[Hit]]:
    """What this request sees now, and the nearest memories it sees: remember's dedup."""
    retiring = asyncio.create_task(ops.replacements.view(tenant))
    try:
        visible = await ops.visible_hits(
            tenant, conversation, embedding, top_k=NEIGHBOUR_CANDIDATES
        )
    finally:
        retired = (await asyncio.gather(retiring, return_exceptions=True))[0]
    if isinstance(retired, BaseException):
        raise retired
    visibility = Visibility(conversation, now_ms=ops.clock_ms(), replacements=retired)
    return visibility, [hit for hit in visible if visibility.sees(hit.memory)]


async def _already_known(
    ops: OperationsContext,
    known: Memory,
    replaced: Memory | None,
    *,
    visibility: Visibility,
    link_updates: bool,
) -> RememberAnswer:
    """remember's answer when a visible memory says the fact already: it counts as a use,
    and it becomes the replacement of what ``replaces`` named. ``link_updates`` False
    undoes the probable updates that name it as the newer memory."""
    await ensure_listed(ops.objects, known)
    ops.counters.record(known.tenant, known.id, at_ms=visibility.now_ms)
    if replaced is not None:
        # The correction is stored already (remembered before, as the hint suggests).
        await ops.replacements.record(known.tenant, replaced.id, known.id)
    kept: tuple[str, ...] = ()
    if not link_updates:
        kept = visibility.replacements.supersedes(known.id)
        for old_id in kept:
            await ops.replacements.record(known.tenant, old_id, known.id, "kept")
    return RememberAnswer(memory=known, already_known=True, replaced=replaced, kept=kept)
