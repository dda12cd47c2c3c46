"""The memory operations: the only place the vector store, the state store, the embedder and
the counters are combined. Tool modules validate arguments and render text; this decides."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Final

from services.api.answers import BulkForgetAnswer, RecallAnswer, RememberAnswer, Version
from services.api.candidates import RECALL_CANDIDATES, recall_candidates
from services.api.versions import one_version, versions_of
from shared.counters import COMPACTION_LAG_MS, CounterTracker
from shared.embedding import Embedder
from shared.lexical import Lexicon
from shared.memories import MemoryDeleter, entry_keys, memory_keys, write_memory
from shared.memories.listing import ListFilter, Listing, StatsAnswer, listed, tally
from shared.memories.repairs import drop_orphan_keys, ensure_listed
from shared.memories.selection import BULK_FORGET_BATCH, ForgetFilter, matching_entries
from shared.memories.visibility import (
    Visibility,
    may_replace,
    named_memory,
    replaceable,
)
from shared.model import Draft, Hit, Memory, MemoryType, iso_ms, new_memory
from shared.model.counters import AccessCount
from shared.model.ids import wall_clock_ms
from shared.ranking import MODE_PROFILES, RecallMode, already_known, probably_updated, rank
from shared.ranking.score import RecallOutcome
from shared.revisions import ReplacementLog
from shared.storage import ObjectStore, Stores, VectorStore, index_tenants
from shared.storage.interfaces import Snapshots
from shared.tasks import abandon
from shared.transfer import ExportedMemory, export_tenant

logger = logging.getLogger(__name__)

# The nearest memories remember compares a new fact with: the one that already says it (dedup
# looks at the nearest), or the one it probably updates (ten linked no more of the revision
# pairs than five, and cost remember 0.1 ms more: docs/calibration.md).
NEIGHBOUR_CANDIDATES: Final = 5


class MemoryService:
    def __init__(
        self,
        *,
        vectors: VectorStore,
        objects: ObjectStore,
        embedder: Embedder,
        counters: CounterTracker,
        lexicon: Lexicon,
        replacements: ReplacementLog,
        floor: float,
        high_similarity: float,
        snapshots: Snapshots | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
        lag_ms: int = COMPACTION_LAG_MS,
    ) -> None:
        self._vectors = vectors
        self._snapshots = snapshots
        self._objects = objects
        self._embedder = embedder
        self._counters = counters
        self._lexicon = lexicon
        self._replacements = replacements
        self._floor = floor
        self._high_similarity = high_similarity
        self._clock_ms = clock_ms
        self._lag_ms = lag_ms
        self._deleter = MemoryDeleter(
            objects, vectors, lexicon.removed, clock_ms=clock_ms, lag_ms=lag_ms
        )

    @property
    def floor(self) -> float:
        return self._floor

    @property
    def lexicon(self) -> Lexicon:
        return self._lexicon

    def _start_embedding(self, text: str) -> asyncio.Task[list[float]]:
        """The embedding as a task started before anything else: it is the longest step, and
        the rest of the call's work (counter and generation reads) can run beside it."""
        return asyncio.create_task(self._embedder.embed(text))

    async def _visible_hits(
        self,
        tenant: str,
        conversation: str | None,
        embedding: asyncio.Task[list[float]],
        top_k: int,
    ) -> list[Hit]:
        # Handed to the store still running, so it can start what does not need the vector.
        try:
            hits = await self._vectors.query(tenant, embedding, top_k=top_k)
        finally:
            abandon(embedding)  # a no-op once it is done; nothing left running on a failure
        return [hit for hit in hits if hit.memory.visible_to(conversation)]

    async def recall(
        self,
        tenant: str,
        conversation: str | None,
        *,
        query: str,
        mode: RecallMode,
        limit: int,
        count_use: bool = True,
    ) -> RecallAnswer:
        """Both legs, fused and ranked; ``count_use``: see ``_count_uses``."""
        embedding = self._start_embedding(query)
        # Neither the counters nor the keyword scoring depend on the vector: both run while the
        # query is embedded (the model runs on its own thread), so a cold read of either (once
        # a minute per tenant) hides behind that latency.
        loading = asyncio.create_task(self._counters.load(tenant))
        scoring = asyncio.create_task(self._lexicon.query(tenant, query))
        retiring = asyncio.create_task(self._replacements.view(tenant))
        try:
            visible = await self._visible_hits(tenant, conversation, embedding, RECALL_CANDIDATES)
        finally:
            # Never left dangling: awaited whether the search succeeded or not.
            loaded, scored, retired = await asyncio.gather(
                loading, scoring, retiring, return_exceptions=True
            )
        if isinstance(loaded, BaseException):
            raise loaded
        if isinstance(scored, BaseException):
            raise scored
        if isinstance(retired, BaseException):
            raise retired
        now_ms = self._clock_ms()
        sight = Visibility(conversation, now_ms=now_ms, replacements=retired)
        gathered = await recall_candidates(
            self._vectors,
            self._snapshots,
            tenant,
            sight,
            visible,
            scored,
            floor=self._floor,
            limit=limit,
        )
        if not gathered.compared:
            return RecallAnswer(mode=mode, visible=0, outcome=None)
        outcome = rank(
            gathered.candidates,
            loaded,
            profile=MODE_PROFILES[mode],
            limit=limit,
            floor=self._floor,
            high_similarity=self._high_similarity,
            now_ms=now_ms,
            names_absent=scored.absent_names > 0,
            links=gathered.links,
        )
        if count_use:
            self._count_uses(tenant, outcome, now_ms=now_ms)
        return RecallAnswer(mode=mode, visible=gathered.compared, outcome=outcome)

    def _count_uses(self, tenant: str, outcome: RecallOutcome, *, now_ms: int) -> None:
        """Only a confident answer counts as a use: a memory returned as the best of weak
        matches for unrelated questions must not climb for the next unrelated one. Nor is a
        person reading the ranking (the memory page, ``count_use`` False) a use of a memory."""
        for ranked in outcome.results:
            if ranked.strong:
                self._counters.record(tenant, ranked.memory.id, at_ms=now_ms)

    async def remember(
        self,
        tenant: str,
        conversation: str | None,
        draft: Draft,
        *,
        replaces: str | None = None,
        expires_in_days: int | None = None,
        link_updates: bool = True,
    ) -> RememberAnswer:
        """Store the fact ``draft`` files, or answer the visible memory that already says it.

        With ``replaces`` the named memory is retired by a replacement record written after
        the fact (a crash in between leaves both visible, as before the correction, never
        neither). The replaced memory is no "already known" answer; another memory that says
        the fact already is, and becomes the replacement.

        Without it, a visible memory the fact probably updates (``shared.ranking.updates``) is
        linked by a record written after the fact: it stays current, ranked below the new one
        (a crash in between leaves two unlinked memories, which recall and list agree on).
        ``link_updates`` False links nothing, and undoes the links that name a memory already
        saying the fact as the newer one: the caller says both stay current.

        Raises:
            InvalidInputError: ``replaces`` names no memory this request may replace.
        """
        embedding = self._start_embedding(draft.content)
        sight, live = await self._live_neighbours(tenant, conversation, embedding)
        replaced = None
        if replaces is not None:
            replaced = await replaceable(self._vectors, tenant, sight, replaces, scope=draft.scope)
            live = [hit for hit in live if hit.memory.id != replaced.id]
        known = already_known(draft.content, live)
        if known is not None and (replaced is None or may_replace(known.memory, replaced)):
            return await self._already_known(
                known.memory, replaced, sight=sight, link_updates=link_updates
            )
        linking = replaced is None and link_updates
        updated = probably_updated(draft.content, live, scope=draft.scope) if linking else None
        memory = new_memory(
            tenant, conversation, draft, expires_in_days=expires_in_days, now_ms=sight.now_ms
        )
        return await self._stored(
            memory,
            embedding.result(),
            replaced=replaced,
            updated=updated.memory if updated is not None else None,
        )

    async def _stored(
        self,
        memory: Memory,
        embedding: list[float],
        *,
        replaced: Memory | None,
        updated: Memory | None,
    ) -> RememberAnswer:
        """Keys, vector (shared.memories), then the lexicon (a memory whose lexicon shard is
        missing is still recalled by the vector leg), then the record retiring ``replaced`` or
        linking ``updated``."""
        await write_memory(self._objects, self._vectors, memory, embedding)
        await self._lexicon.added(memory)
        if replaced is not None:
            await self._replacements.record(memory.tenant, replaced.id, memory.id)
        elif updated is not None:
            await self._replacements.record(memory.tenant, updated.id, memory.id, "supersedes")
        return RememberAnswer(
            memory=memory, already_known=False, replaced=replaced, supersedes=updated
        )

    async def _live_neighbours(
        self, tenant: str, conversation: str | None, embedding: asyncio.Task[list[float]]
    ) -> tuple[Visibility, list[Hit]]:
        """What this request sees now, and the nearest memories it sees: remember's dedup."""
        retiring = asyncio.create_task(self._replacements.view(tenant))
        try:
            visible = await self._visible_hits(
                tenant, conversation, embedding, top_k=NEIGHBOUR_CANDIDATES
            )
        finally:
            retired = (await asyncio.gather(retiring, return_exceptions=True))[0]
        if isinstance(retired, BaseException):
            raise retired
        sight = Visibility(conversation, now_ms=self._clock_ms(), replacements=retired)
        return sight, [hit for hit in visible if sight.sees(hit.memory)]

    async def _already_known(
        self, known: Memory, replaced: Memory | None, *, sight: Visibility, link_updates: bool
    ) -> RememberAnswer:
        """remember's answer when a visible memory says the fact already: it counts as a use,
        and it becomes the replacement of what ``replaces`` named. ``link_updates`` False
        undoes the probable updates that name it as the newer memory."""
        await ensure_listed(self._objects, known)
        self._counters.record(known.tenant, known.id, at_ms=sight.now_ms)
        if replaced is not None:
            # The correction is stored already (remembered before, as the hint suggests).
            await self._replacements.record(known.tenant, replaced.id, known.id)
        kept: tuple[str, ...] = ()
        if not link_updates:
            kept = sight.replacements.supersedes(known.id)
            for old_id in kept:
                await self._replacements.record(known.tenant, old_id, known.id, "kept")
        return RememberAnswer(memory=known, already_known=True, replaced=replaced, kept=kept)

    async def list_memories(
        self,
        tenant: str,
        conversation: str | None,
        *,
        memory_type: MemoryType | None,
        limit: int,
    ) -> list[Memory]:
        listing = await self.browse(
            tenant, conversation, match=ListFilter(memory_type=memory_type), limit=limit
        )
        return listing.memories

    async def browse(
        self,
        tenant: str,
        conversation: str | None,
        *,
        match: ListFilter,
        limit: int,
        before: str | None = None,
    ) -> Listing:
        """list_memories with every filter (``shared.memories.listing``), resuming after the
        memory ``before``: what the memory page's list view shows."""
        sight = await self._sight(tenant, conversation)
        forgetting = await self._deleter.forgetting(tenant)
        listing = await listed(
            self._objects,
            self._vectors,
            tenant,
            sight,
            match=match,
            limit=limit,
            skip=forgetting,
            before=before,
        )
        await drop_orphan_keys(
            self._objects, tenant, listing.bodiless, now_ms=self._clock_ms(), lag_ms=self._lag_ms
        )
        return listing

    async def access_counts(self, tenant: str) -> Mapping[str, AccessCount]:
        """How often each memory was returned by recall (approximate; see shared.counters)."""
        return await self._counters.load(tenant)

    async def tenants(self, *, limit: int) -> list[str]:
        """Up to ``limit`` tenants with a memory, in key order (the memory page's chooser)."""
        return await index_tenants(self._objects, limit=limit)

    def export(self, tenant: str) -> AsyncIterator[ExportedMemory]:
        """The whole tenant as ``mcp-memory export`` writes it (every conversation's notes).
        Raises InvalidInputError (``tenant``) when it has no memories."""
        stores = Stores(vectors=self._vectors, objects=self._objects, description="")
        return export_tenant(stores, tenant, now_ms=self._clock_ms())

    async def _sight(self, tenant: str, conversation: str | None) -> Visibility:
        replacements = await self._replacements.view(tenant)
        return Visibility(conversation, now_ms=self._clock_ms(), replacements=replacements)

    async def forget(self, tenant: str, conversation: str | None, *, memory_id: str) -> bool:
        """Delete one memory; False (and nothing deleted) when this caller cannot see it.

        A replaced version can be forgotten too (its id stays in memory_history). Forgetting a
        version deletes only it: the replacement records stay, so what it replaced stays
        retired, and a memory that replaced it stays current."""
        now_iso = iso_ms(self._clock_ms())
        memory = await named_memory(
            self._vectors, tenant, memory_id, conversation=conversation, now_iso=now_iso
        )
        if memory is None:
            return False
        await self._deleter.delete(tenant, [memory_id], memory_keys(memory))
        return True

    async def forget_matching(
        self, tenant: str, conversation: str | None, *, match: ForgetFilter, confirm: bool
    ) -> BulkForgetAnswer:
        """Every memory this request can see that ``match`` selects, current or replaced;
        counted only unless ``confirm``, then the oldest ``BULK_FORGET_BATCH`` deleted."""
        sight = await self._sight(tenant, conversation)
        forgetting = await self._deleter.forgetting(tenant)
        matched = [
            entry
            for entry in await matching_entries(self._objects, self._vectors, tenant, sight, match)
            if entry.memory_id not in forgetting
        ]
        if not confirm or not matched:
            return BulkForgetAnswer(matched=len(matched), deleted=0)
        batch = matched[:BULK_FORGET_BATCH]
        await self._deleter.delete(tenant, [e.memory_id for e in batch], entry_keys(tenant, batch))
        logger.info("bulk_forget", extra={"tenant": tenant, "deleted": len(batch)})
        return BulkForgetAnswer(matched=len(matched), deleted=len(batch))

    async def history(
        self, tenant: str, conversation: str | None, *, memory_id: str
    ) -> list[Version] | None:
        """Every version of the fact ``memory_id`` belongs to that this request may see,
        newest first; None when it names nothing this request can see."""
        sight = await self._sight(tenant, conversation)
        return await versions_of(self._vectors, tenant, sight, memory_id)

    async def get(self, tenant: str, conversation: str | None, *, memory_id: str) -> Version | None:
        """One memory whole, with what replaced it and its probable-update links; None when
        this request may not see it (another conversation's note, expired, forgotten, or no
        such id: all answered alike)."""
        sight = await self._sight(tenant, conversation)
        return await one_version(self._vectors, tenant, sight, memory_id)

    async def stats(self, tenant: str, conversation: str | None) -> StatsAnswer:
        sight = await self._sight(tenant, conversation)
        forgetting = await self._deleter.forgetting(tenant)
        return await tally(self._objects, tenant, sight, skip=forgetting)
