"""What a repairer running beside the API works with (the compactor's expiry and reconcile
jobs): both stores, the name its lexicon shards go out under, its clock, and the lag within
which a mismatch may still be a write in flight and is left alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from shared.lexical.segments import LexiconShard
from shared.lexical.stored import write_lexicon_shard
from shared.storage.interfaces import ObjectStore, VectorStore
from shared.storage.shardlog import COMPACTION_LAG_MS


class RepairContext(msgspec.Struct, frozen=True, kw_only=True):
    """One process's stores and identity, for the repairs that are not the API's."""

    vectors: VectorStore
    objects: ObjectStore
    process_id: str
    clock_ms: Callable[[], int]
    lag_ms: int = COMPACTION_LAG_MS

    async def write_lexicon(self, tenant: str, shard: LexiconShard) -> None:
        """One lexicon shard, under a name only this process writes."""
        await write_lexicon_shard(
            self.objects, tenant, shard, process_id=self.process_id, now_ms=self.clock_ms()
        )

    async def remove_from_lexicon(self, tenant: str, ids: Sequence[str]) -> None:
        await self.write_lexicon(tenant, LexiconShard(remove=list(ids)))
