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
from shared.process.tasks import abandon
from shared.ranking import already_known
from shared.ranking.figures import figure_candidates, first_restated
from shared.ranking.memory_readings import is_a_fact, plain_terms_of, values_of, words_of
from shared.ranking.relations import shared_names
from shared.ranking.updates import UpdateCheck

# The nearest memories remember compares a new fact with: the one that already says it (dedup
# looks at the nearest), or the one it probably updates (more links no more of the revision
# pairs and costs remember time: docs/calibration.md).
NEIGHBOUR_CANDIDATES: Final = 5
# The memories that share most of a new fact's words (its names weigh most, being rare) are
# compared with it too, after the nearest: among many facts of one pattern ("… works for
# Nokia."), the nearest by meaning are other subjects' facts of that pattern, and the subject's
# own earlier fact may be none of them (docs/calibration.md).
WORD_NEIGHBOURS: Final = 5


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
    linking = replaces is None and link_updates
    # Beside the embedding, as recall's keyword leg: it does not need the vector. Only for a
    # fact of a sentence or so: a longer text is compared sentence by sentence with its nearest.
    sharing = (
        asyncio.create_task(ops.lexicon.sharing_words(tenant, draft.content, top_k=WORD_NEIGHBOURS))
        if linking and is_a_fact(words_of(draft.content))
        else None
    )
    try:
        visibility, live = await _live_neighbours(ops, tenant, conversation, embedding)
        replaced = None
        if replaces is not None:
            replaced = await replaceable(
                ops.vectors, tenant, visibility, replaces, scope=draft.scope
            )
            live = [hit for hit in live if hit.memory.id != replaced.id]
        known = already_known(draft.content, live)
        if known is not None and (replaced is None or may_replace(known.memory, replaced)):
            return await _already_known(
                ops, known.memory, replaced, visibility=visibility, link_updates=link_updates
            )
        memory = new_memory(
            tenant, conversation, draft, expires_in_days=expires_in_days, now_ms=visibility.now_ms
        )
        neighbours = _Neighbours(live, sharing, visibility) if linking else None
        return await _stored(
            ops, memory, embedding.result(), replaced=replaced, neighbours=neighbours
        )
    finally:
        if sharing is not None:
            abandon(sharing)  # a no-op once it is done; nothing left running on a failure


class _Neighbours:
    """What a new memory is compared with for a probable update: the nearest memories by
    meaning (``live``), then those sharing most of its words (``sharing``: their ids, from the
    keyword leg), each as ``visibility`` lets the request see it."""

    def __init__(
        self, live: list[Hit], sharing: asyncio.Task[list[str]] | None, visibility: Visibility
    ) -> None:
        self.live = live
        self._sharing = sharing
        self._visibility = visibility

    async def sharing_words(self, ops: OperationsContext, tenant: str) -> list[Memory]:
        """The memories that share most of the new one's words, best first, but the nearest."""
        if self._sharing is None:
            return []
        ids = await self._sharing
        nearest = {hit.memory.id for hit in self.live}
        wanted = [
            memory_id
            for memory_id in ids
            if memory_id not in nearest and not self._visibility.replacements.retired(memory_id)
        ]
        found = await ops.bodies(tenant, wanted) if wanted else {}
        return [found[i] for i in wanted if i in found and self._visibility.sees(found[i])]


async def _stored(
    ops: OperationsContext,
    memory: Memory,
    embedding: list[float],
    *,
    replaced: Memory | None,
    neighbours: _Neighbours | None,
) -> RememberAnswer:
    """Keys, vector (shared.memories), then the lexicon (a memory whose lexicon shard is
    missing is still recalled by the vector leg), then the record retiring ``replaced`` or
    linking the neighbour the memory probably updates. Which one that is matters only to the
    link, written last, so the text rules read the neighbours while the store writes."""
    writing = asyncio.create_task(write_memory(ops.objects, ops.vectors, memory, embedding))
    await asyncio.sleep(0)  # the write's first request is on its way before the rules run
    try:
        updated = await _probably_updated(ops, memory, neighbours) if neighbours else None
    finally:
        await writing
    await ops.lexicon.added(memory)
    if replaced is not None:
        await ops.replacements.record(memory.tenant, replaced.id, memory.id)
    elif updated is not None:
        await ops.replacements.record(memory.tenant, updated.id, memory.id, "supersedes")
    return RememberAnswer(memory=memory, already_known=False, replaced=replaced, supersedes=updated)


async def _probably_updated(
    ops: OperationsContext, memory: Memory, neighbours: _Neighbours
) -> Memory | None:
    """The neighbour ``memory`` probably updates: by the text rules, the nearest first, then
    those sharing its words; or, between texts of a chat sentence or two where the words say
    no, a nearest one with a figure restated in other words (``shared.ranking.figures``): the
    few sentences that hold it are embedded, only then. Without those embeddings the link is
    left out, never the memory. A long text is never linked (``UpdateCheck.first_updated``)."""
    check = UpdateCheck(memory.content)  # read once, against each kind of neighbour
    found = check.nearest_updated(neighbours.live, scope=memory.scope)
    if found is not None:
        return found.memory
    # Of those sharing its words, only what speaks of the same name: that is what they share.
    sharing = [
        other
        for other in await neighbours.sharing_words(ops, memory.tenant)
        if _names_the_same(memory.content, other.content)
    ]
    updated = check.first_updated(sharing, scope=memory.scope)
    if updated is not None:
        return updated
    candidates = figure_candidates(memory.content, neighbours.live, scope=memory.scope)
    if not candidates:
        return None
    sentences = sorted({s for _, pairs in candidates for pair in pairs for s in pair})
    try:
        vectors = await ops.embedder.embed_many(sentences)
    except EmbeddingError:
        return None
    restated = first_restated(candidates, dict(zip(sentences, vectors, strict=True)))
    return restated.memory if restated is not None else None


def _names_the_same(new: str, other: str) -> bool:
    """Whether two texts speak of the same name, said inside a sentence (the first word of one
    is capitalised whatever it is: "Every morning Owen Price has coffee."), and share a word
    written in lower case: a name alone says nothing of whether they tell the same thing of it
    ("… now lives in Rotterdam." after "… is a citizen of Portugal.")."""
    names = shared_names(new, other) & values_of(new) & values_of(other)
    return bool(names) and bool(plain_terms_of(new) & plain_terms_of(other))


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
