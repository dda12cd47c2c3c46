"""The memory operations: the only place the vector store, the state store, the embedder and
the counters are combined. Tool modules validate arguments and render text; this decides."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Final, Protocol

import msgspec

from services.api.answers import (
    BulkForgetAnswer,
    ForgetFilter,
    RecallAnswer,
    RememberAnswer,
    StatsAnswer,
    Version,
)
from services.api.listing import ListFilter, Listing, listed
from services.api.selection import matching_entries
from shared.counters import COMPACTION_LAG_MS
from shared.embedding import Embedder
from shared.errors import ConflictError, InvalidInputError, StorageError
from shared.lexical import KeywordQuery, Lexicon
from shared.memories import MemoryDeleter, write_memory
from shared.model import (
    DAY_MS,
    MEMORY_TYPES,
    Hit,
    IndexEntry,
    Memory,
    MemoryType,
    Scope,
    index_key,
    index_prefix,
    iso_ms,
    new_ulid,
    parse_index_key,
    ulid_time_ms,
    wall_clock_ms,
)
from shared.model.counters import AccessCount
from shared.model.keys import expiry_key, expiry_key_of
from shared.ranking import (
    MODE_PROFILES,
    Candidate,
    RecallMode,
    already_known,
    fuse,
    names_held,
    passes_floor,
    possible_revision,
    rank,
)
from shared.reconcile import settled
from shared.revisions import ReplacementLog, Visibility, provably_seen
from shared.storage import ObjectStore, Stores, VectorStore, index_tenants
from shared.tasks import abandon
from shared.transfer import ExportedMemory, export_tenant

logger = logging.getLogger(__name__)

# The store is asked for the nearest hundred; visibility is applied to what comes back.
RECALL_CANDIDATES: Final = 100
# The keyword leg's own best, over all of the tenant's memories, beside the vector's hundred.
KEYWORD_CANDIDATES: Final = 100
# How deep, in multiples of the limit, keyword-only hits are worth fetching (see _candidates).
FETCH_WINDOW: Final = 3
DEDUP_CANDIDATES: Final = 5
STATS_SCAN_CAP: Final = 10_000
# A bulk forget deletes at most this many per call and says how many remain.
BULK_FORGET_BATCH: Final = 1000


class AccessCounters(Protocol):
    """The counters as the service uses them (shared.counters.CounterTracker implements it)."""

    def record(self, tenant: str, memory_id: str, *, at_ms: int) -> None: ...

    async def load(self, tenant: str) -> Mapping[str, AccessCount]: ...


def _may_replace(replacement: Memory, replaced: Memory) -> bool:
    """A conversation note cannot stand in for a project memory: it retires it everywhere."""
    return not (replaced.scope == "project" and replacement.scope == "conversation")


class MemoryService:
    def __init__(
        self,
        *,
        vectors: VectorStore,
        objects: ObjectStore,
        embedder: Embedder,
        counters: AccessCounters,
        lexicon: Lexicon,
        replacements: ReplacementLog,
        floor: float,
        high_similarity: float,
        clock_ms: Callable[[], int] = wall_clock_ms,
        lag_ms: int = COMPACTION_LAG_MS,
    ) -> None:
        self._vectors = vectors
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
        *,
        top_k: int,
    ) -> list[Hit]:
        # Handed to the store still running, so it can start what does not need the vector.
        try:
            hits = await self._vectors.query_after(tenant, embedding, top_k=top_k)
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
        """``count_use`` False: a person reading the ranking (the memory page) is no use of a
        memory, so its answer does not feed the access counts the next ranking reads."""
        embedding = self._start_embedding(query)
        # Neither the counters nor the keyword scoring depend on the vector: both run while the
        # query is embedded (the model runs on its own thread), so a cold read of either (once
        # a minute per tenant) hides behind that latency.
        loading = asyncio.create_task(self._counters.load(tenant))
        scoring = asyncio.create_task(self._lexicon.query(tenant, query))
        retiring = asyncio.create_task(self._replacements.view(tenant))
        try:
            visible = await self._visible_hits(
                tenant, conversation, embedding, top_k=RECALL_CANDIDATES
            )
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
        live = [hit for hit in visible if sight.sees(hit.memory)]
        candidates = await self._candidates(tenant, sight, live, scored, limit=limit)
        if not candidates:
            return RecallAnswer(mode=mode, visible=0, outcome=None)
        outcome = rank(
            candidates,
            loaded,
            profile=MODE_PROFILES[mode],
            limit=limit,
            floor=self._floor,
            high_similarity=self._high_similarity,
            now_ms=now_ms,
            names_absent=scored.absent_names > 0,
        )
        # Only a confident answer counts as a use: a memory returned as the best of weak matches
        # for unrelated questions must not climb for the next unrelated one.
        for ranked in outcome.results:
            if ranked.strong and count_use:
                self._counters.record(tenant, ranked.memory.id, at_ms=now_ms)
        return RecallAnswer(mode=mode, visible=len(candidates), outcome=outcome)

    async def _candidates(
        self,
        tenant: str,
        sight: Visibility,
        visible: list[Hit],
        scored: KeywordQuery,
        *,
        limit: int,
    ) -> list[Candidate]:
        """Both legs fused, with the bodies of the keyword-only hits that could be returned
        fetched in one read; what this request may not see is dropped (a keyword hit may be a
        memory the vector leg never returned: another conversation's, expired or retired).

        Only keyword-only hits among the first ``limit × FETCH_WINDOW`` (names held, then
        relevance) can be returned: the tie-break moves a result by at most a tenth of the
        floor, and the newer-first rule only reorders what is returned."""
        keyword = scored.result(
            top_k=KEYWORD_CANDIDATES, include=[hit.memory.id for hit in visible]
        )
        fused = fuse(visible, keyword, floor=self._floor)
        # In the order rank puts them: the query's names held first, then relevance.
        passing = sorted(
            (c for c in fused if passes_floor(c, floor=self._floor)),
            key=lambda c: (names_held(c), c.relevance),
            reverse=True,
        )
        wanted = [
            c.memory_id
            for c in passing[: limit * FETCH_WINDOW]
            if c.memory is None and not sight.replacements.retired(c.memory_id)
        ]
        found = (
            {m.id: m for m in await self._vectors.get_for_recall(tenant, wanted)} if wanted else {}
        )
        candidates = []
        for candidate in fused:
            memory = candidate.memory or found.get(candidate.memory_id)
            if memory is not None and sight.sees(memory):
                candidates.append(
                    candidate
                    if candidate.memory is not None
                    else msgspec.structs.replace(candidate, memory=memory)
                )
        return candidates

    async def remember(
        self,
        tenant: str,
        conversation: str | None,
        *,
        content: str,
        memory_type: MemoryType,
        category: str | None,
        tags: Sequence[str],
        scope: Scope,
        replaces: str | None = None,
        expires_in_days: int | None = None,
    ) -> RememberAnswer:
        """Store a fact, or answer the visible memory that already says it.

        With ``replaces`` the named memory is retired by a replacement record written after
        the fact (a crash in between leaves both visible, as before the correction, never
        neither). The replaced memory is no "already known" answer; another memory that says
        the fact already is, and becomes the replacement.

        Raises:
            InvalidInputError: ``replaces`` names no memory this request may replace.
        """
        embedding = self._start_embedding(content)
        retiring = asyncio.create_task(self._replacements.view(tenant))
        try:
            visible = await self._visible_hits(
                tenant, conversation, embedding, top_k=DEDUP_CANDIDATES
            )
        finally:
            retired = (await asyncio.gather(retiring, return_exceptions=True))[0]
        if isinstance(retired, BaseException):
            raise retired
        now_ms = self._clock_ms()
        sight = Visibility(conversation, now_ms=now_ms, replacements=retired)
        live = [hit for hit in visible if sight.sees(hit.memory)]
        replaced = None
        if replaces is not None:
            replaced = await self._replaceable(tenant, sight, replaces, scope=scope)
            live = [hit for hit in live if hit.memory.id != replaced.id]
        known = already_known(content, live)
        if known is not None and (replaced is None or _may_replace(known.memory, replaced)):
            await self._ensure_listed(known.memory)
            self._counters.record(tenant, known.memory.id, at_ms=now_ms)
            if replaced is not None:
                # The correction is stored already (remembered before, as the hint suggests).
                await self._replacements.record(tenant, replaced.id, known.memory.id)
            return RememberAnswer(memory=known.memory, already_known=True, replaced=replaced)
        memory = Memory(
            id=new_ulid(now_ms),
            tenant=tenant,
            content=content,
            memory_type=memory_type,
            category=category,
            tags=tuple(tags),
            scope=scope,
            # Recorded whatever the scope: visibility key when scoped, provenance otherwise.
            conversation=conversation,
            created_at=iso_ms(now_ms),
            expires_at=(
                iso_ms(now_ms + expires_in_days * DAY_MS) if expires_in_days is not None else None
            ),
        )
        await self._write(memory, embedding.result())
        if replaced is not None:
            await self._replacements.record(tenant, replaced.id, memory.id)
            return RememberAnswer(memory=memory, already_known=False, replaced=replaced)
        revision = possible_revision(content, live)
        return RememberAnswer(
            memory=memory,
            already_known=False,
            may_update=revision.memory if revision is not None else None,
        )

    async def _replaceable(
        self, tenant: str, sight: Visibility, memory_id: str, *, scope: Scope
    ) -> Memory:
        """The memory ``replaces`` names, if this request may replace it."""
        found = await self._vectors.get(tenant, [memory_id])
        memory = next((m for m in found if m.id == memory_id), None)
        if (
            memory is None
            or not memory.visible_to(sight.conversation)
            or memory.expired(sight.now_iso)
        ):
            raise InvalidInputError(
                "replaces",
                f"`replaces`: no memory {memory_id} is visible to this request (forgotten, "
                "expired, or another conversation's note); recall or list_memories shows the "
                "ids you can replace",
            )
        if sight.replacements.retired(memory_id):
            by = ", ".join(sight.replacements.replaced_by(memory_id))
            current = sight.replacements.current(memory_id)
            raise InvalidInputError(
                "replaces",
                f"`replaces`: {memory_id} was already replaced by {by}; the current version is "
                f"{', '.join(current)}: pass replaces={current[-1]} to correct it",
            )
        if memory.scope == "project" and scope == "conversation":
            # A replacement retires its memory everywhere; a conversation note is seen in one.
            raise InvalidInputError(
                "replaces",
                '`replaces` names a project memory, and scope "conversation" would hide the '
                'correction from every other conversation; use scope "project"',
            )
        return memory

    async def _write(self, memory: Memory, embedding: Sequence[float]) -> None:
        # Keys, vector (shared.memories), then the lexicon: a memory whose lexicon shard is
        # missing is still recalled by the vector leg.
        await write_memory(self._objects, self._vectors, memory, embedding)
        await self._lexicon.added(memory)

    async def _ensure_listed(self, memory: Memory) -> None:
        """Write the index key of a memory answered as already known when it has none: one
        written by 0.9 or 0.10 (vector first) and cut off by a crash before its key. The key is
        derived from the memory alone, and a create-only put cannot clobber a live one."""
        key = index_key(memory)
        try:
            if await self._objects.etag(key) is None:
                await self._objects.put(key, "", if_none_match=True)
                logger.info("index_key_restored", extra={"tenant": memory.tenant})
        except ConflictError:
            pass  # written meanwhile: listed either way
        except StorageError:
            # The answer stands; the compactor's reconcile job restores the key later.
            logger.warning("index_key_restore_failed", extra={"tenant": memory.tenant})

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
        """list_memories with every filter (``services.api.listing``), resuming after the
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
        await self._drop_orphan_keys(tenant, listing.bodiless)
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

    async def _drop_orphan_keys(self, tenant: str, bodiless: Sequence[IndexEntry]) -> None:
        """Delete the index keys list found without a vector, once older than the lag: left by
        a process killed mid-remember or mid-forget (a younger one may be a remember still in
        flight). Without this they would be counted by memory_stats until the compactor's
        reconcile job ran."""
        now_ms = self._clock_ms()
        orphaned = [
            e.key for e in bodiless if settled(e.memory_id, now_ms=now_ms, lag_ms=self._lag_ms)
        ]
        if not orphaned:
            return
        try:
            await self._objects.delete(orphaned)
        except StorageError:
            logger.warning("orphan_key_cleanup_failed", extra={"tenant": tenant})
            return
        logger.info("orphan_keys_deleted", extra={"tenant": tenant, "keys": len(orphaned)})

    async def forget(self, tenant: str, conversation: str | None, *, memory_id: str) -> bool:
        """Delete one memory; False (and nothing deleted) when this caller cannot see it.

        A replaced version can be forgotten too (its id stays in memory_history). Forgetting a
        version deletes only it: the replacement records stay, so what it replaced stays
        retired, and a memory that replaced it stays current."""
        found = await self._vectors.get(tenant, [memory_id])
        memory = next((m for m in found if m.id == memory_id), None)
        if (
            memory is None
            or not memory.visible_to(conversation)
            or memory.expired(iso_ms(self._clock_ms()))
        ):
            return False
        await self._deleter.delete(tenant, [memory_id], [index_key(memory), expiry_key_of(memory)])
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
        keys = [e.key for e in batch] + [
            expiry_key(tenant, e.memory_id, e.expires_ms) for e in batch if e.expires_ms is not None
        ]
        await self._deleter.delete(tenant, [e.memory_id for e in batch], keys)
        logger.info("bulk_forget", extra={"tenant": tenant, "deleted": len(batch)})
        return BulkForgetAnswer(matched=len(matched), deleted=len(batch))

    async def history(
        self, tenant: str, conversation: str | None, *, memory_id: str
    ) -> list[Version] | None:
        """Every version of the fact ``memory_id`` belongs to that this request may see,
        newest first; None when it names nothing this request can see."""
        sight = await self._sight(tenant, conversation)
        ids = sight.replacements.versions(memory_id)
        found = {m.id: m for m in await self._vectors.get(tenant, list(ids))}
        # A version without a body is shown only where its neighbours prove this request
        # could have seen it (shared.revisions.forgotten): its id alone would tell another
        # conversation that a note of its existed.
        bodiless = provably_seen(sight.replacements, found, conversation)
        shown = {v for v, m in found.items() if m.visible_to(conversation)} | bodiless
        if memory_id not in shown:
            return None  # answered as an id that never existed
        return [
            Version(
                memory_id=version_id,
                memory=found.get(version_id),
                replaced_by=sight.replacements.replaced_by(version_id),
                expired=(m := found.get(version_id)) is not None and m.expired(sight.now_iso),
            )
            for version_id in ids
            if version_id in shown
        ]

    async def get(self, tenant: str, conversation: str | None, *, memory_id: str) -> Version | None:
        """One memory whole, with what replaced it; None when this request may not see it
        (another conversation's note, expired, forgotten, or no such id: all answered alike)."""
        sight = await self._sight(tenant, conversation)
        found = await self._vectors.get(tenant, [memory_id])
        memory = next((m for m in found if m.id == memory_id), None)
        if memory is None or not memory.visible_to(conversation) or memory.expired(sight.now_iso):
            return None
        return Version(
            memory_id=memory_id,
            memory=memory,
            replaced_by=sight.replacements.replaced_by(memory_id),
            expired=False,
        )

    async def stats(self, tenant: str, conversation: str | None) -> StatsAnswer:
        sight = await self._sight(tenant, conversation)
        forgetting = await self._deleter.forgetting(tenant)
        keys = await self._objects.list(index_prefix(tenant), limit=STATS_SCAN_CAP)
        by_type = dict.fromkeys(MEMORY_TYPES, 0)
        created: list[tuple[int, MemoryType]] = []
        for key in keys:
            entry = parse_index_key(key)
            if entry is not None and sight.sees_entry(entry) and entry.memory_id not in forgetting:
                by_type[entry.memory_type] += 1
                created.append((ulid_time_ms(entry.memory_id) or 0, entry.memory_type))
        # The cap is judged on keys scanned, so a total thinned by other threads is flagged too.
        return StatsAnswer(
            by_type={t: n for t, n in by_type.items() if n},
            capped=len(keys) >= STATS_SCAN_CAP,
            created=tuple(created),
        )
