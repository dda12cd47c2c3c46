"""What every memory operation runs over: the stores, the embedder, the counters, the lexicon,
the replacement records, the clock and the recall floor, fixed for the life of a process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import msgspec

from shared.counters import COMPACTION_LAG_MS, CounterTracker
from shared.embedding import Embedder
from shared.embedding.recent import RecentVectors
from shared.lexical import Lexicon
from shared.memories import MemoryDeleter
from shared.memories.visibility import Visibility
from shared.model import Hit, Memory
from shared.model.ids import wall_clock_ms
from shared.operations.relations import RelationVectors
from shared.operations.tenant_names import TenantNames
from shared.process.tasks import abandon
from shared.revisions import ReplacementLog
from shared.storage import ObjectStore, VectorStore
from shared.storage.interfaces import Snapshots


class OperationsContext(msgspec.Struct, frozen=True, kw_only=True):
    """``floor``: the relevance a recall result must reach; ``high_similarity``: the cosine at
    which a top result is HIGH confidence; ``snapshots``: the in-process copies recall reads
    bodies from where the backend keeps them; ``deleter``: this process's forgets, with the
    journal of the ones in progress, and ``questions``: the vectors of the questions recalled
    last (both built by :func:`operations_context`); ``relations``: the model's reading of what
    short facts say of whom they name, None where the model's line for it is not measured
    (``shared.ranking.relations``); ``tenant_names``:
    the tenants an empty answer may name as the one probably meant, None where tenant names
    are not to be disclosed (``tenant_hint``)."""

    vectors: VectorStore
    objects: ObjectStore
    snapshots: Snapshots | None
    embedder: Embedder
    counters: CounterTracker
    lexicon: Lexicon
    replacements: ReplacementLog
    deleter: MemoryDeleter
    questions: RecentVectors
    floor: float
    high_similarity: float
    clock_ms: Callable[[], int]
    lag_ms: int
    relations: RelationVectors | None = None
    tenant_names: TenantNames | None = None

    def start_embedding(self, text: str) -> asyncio.Task[list[float]]:
        """The embedding as a task started before anything else: it is the longest step, and
        the rest of the call's work (counter and generation reads) can run beside it."""
        return asyncio.create_task(self.embedder.embed(text))

    def start_question_embedding(self, question: str) -> asyncio.Task[list[float]]:
        """As :meth:`start_embedding`, for a question: one asked lately is not embedded again."""
        return asyncio.create_task(self.questions.embed(question))

    async def visible_hits(
        self,
        tenant: str,
        conversation: str | None,
        embedding: asyncio.Task[list[float]],
        *,
        top_k: int,
    ) -> list[Hit]:
        # Handed to the store still running, so it can start what does not need the vector.
        try:
            hits = await self.vectors.query(tenant, embedding, top_k=top_k)
        finally:
            abandon(embedding)  # a no-op once it is done; nothing left running on a failure
        return [hit for hit in hits if hit.memory.visible_to(conversation)]

    async def bodies(self, tenant: str, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories of ``ids`` that exist, by id: from ``snapshots`` where the backend keeps
        them (as fresh as the vector query the caller just made), else read."""
        held = self.snapshots.memories(tenant, ids) if self.snapshots is not None else []
        found = {memory.id: memory for memory in held}
        missing = [memory_id for memory_id in ids if memory_id not in found]
        if missing:
            found.update((memory.id, memory) for memory in await self.vectors.get(tenant, missing))
        return found

    async def visibility(self, tenant: str, conversation: str | None) -> Visibility:
        """What a request in ``conversation`` may see of ``tenant`` now."""
        replacements = await self.replacements.view(tenant)
        return Visibility(conversation, now_ms=self.clock_ms(), replacements=replacements)


def operations_context(
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
    tenant_hints: bool = False,
) -> OperationsContext:
    """The context over these, with the deleter their forgets go through; ``tenant_hints``:
    an empty answer may name the existing tenant a mistyped one probably meant (only on one
    person's machine: ``--local`` on loopback with no key)."""
    deleter = MemoryDeleter(objects, vectors, lexicon.removed, clock_ms=clock_ms, lag_ms=lag_ms)
    return OperationsContext(
        vectors=vectors,
        objects=objects,
        snapshots=snapshots,
        embedder=embedder,
        counters=counters,
        lexicon=lexicon,
        replacements=replacements,
        deleter=deleter,
        questions=RecentVectors(embedder),
        floor=floor,
        high_similarity=high_similarity,
        clock_ms=clock_ms,
        lag_ms=lag_ms,
        relations=(
            RelationVectors(embedder, embedder.relation_lines)
            if embedder.relation_lines is not None
            else None
        ),
        tenant_names=TenantNames(objects, clock_ms=clock_ms) if tenant_hints else None,
    )
