"""The lexicon as it stands in the state store: shards written and read, the documents it holds
(reconcile compares them with the vectors), and merged.json built from the memories themselves
for a tenant written before the keyword leg existed. The per-process index over it is
``shared.lexical.lexicon``; the fold is the shard log's (``LEXICON_LOG``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from shared.errors import ConflictError, StorageError
from shared.lexical.segments import (
    LEXICON_LAYOUT,
    Documents,
    Labels,
    LexiconShard,
    MergedLexicon,
    decode_for_fold,
    decode_merged,
    decode_shard,
    encode,
)
from shared.storage.index import index_entries
from shared.storage.interfaces import ObjectStore, VectorStore

logger = logging.getLogger(__name__)

BACKFILL_BATCH: Final = 100


async def backfill(
    objects: ObjectStore, vectors: VectorStore, tenant: str, *, etag: str | None
) -> tuple[MergedLexicon, str | None, bool]:
    """merged.json built from the memories themselves, written unless another process wrote
    one first (then that one is used); its etag, and whether this call wrote it.

    Raises:
        StorageError: a read or write failed, or merged.json changed into something unreadable.
    """
    ids: list[str] = []
    async for entries in index_entries(objects, tenant):
        ids.extend(entry.memory_id for entry in entries)
    docs: Documents = {}
    labels: Labels = {}
    for start in range(0, len(ids), BACKFILL_BATCH):
        batch = LexiconShard.of(await vectors.get(tenant, ids[start : start + BACKFILL_BATCH]))
        docs.update(batch.add)
        labels.update(batch.labels)
    merged = MergedLexicon(docs=docs, labels=labels)
    key = LEXICON_LAYOUT.merged_key(tenant)
    try:
        written = await objects.put(key, encode(merged), if_match=etag, if_none_match=etag is None)
    except ConflictError:
        stored = await objects.get(key)
        other = decode_merged(stored.body) if stored is not None else None
        if stored is None or other is None:
            raise StorageError(
                f"the lexicon of tenant {tenant!r} changed while it was being rebuilt"
            ) from None
        return other, stored.etag, False
    logger.info("lexicon_backfilled", extra={"tenant": tenant, "documents": len(docs)})
    return merged, written, True


async def read_lexicon_shards(
    objects: ObjectStore, tenant: str, names: Sequence[str]
) -> dict[str, LexiconShard]:
    """The bodies of these shards; one that is gone (folded and deleted) or unreadable is left
    out (a fold already holds what a deleted one said)."""
    bodies = await LEXICON_LAYOUT.bodies(objects, tenant, names)
    shards = {name: decode_shard(body) for name, body in bodies.items()}
    return {name: shard for name, shard in shards.items() if shard is not None}


async def write_lexicon_shard(
    objects: ObjectStore, tenant: str, shard: LexiconShard, *, process_id: str, now_ms: int
) -> str:
    """Write one shard under a name only this process uses; its name."""
    return await LEXICON_LAYOUT.write(
        objects, tenant, encode(shard), process_id=process_id, now_ms=now_ms
    )


async def lexicon_documents(objects: ObjectStore, tenant: str) -> set[str] | None:
    """The memory ids the tenant's lexicon holds now (merged.json and every shard above its
    watermark), or None when it has no readable merged.json yet: the first recall backfills
    that from the memories themselves."""
    stored = await objects.get(LEXICON_LAYOUT.merged_key(tenant))
    merged = decode_for_fold(stored.body) if stored is not None else None
    if merged is None:
        return None
    names = await LEXICON_LAYOUT.names(objects, tenant, after=merged.watermark)
    shards = await read_lexicon_shards(objects, tenant, names)
    held, removed = set(merged.docs), set()
    for shard in (shards[name] for name in names if name in shards):
        held.update(shard.add)
        removed.update(shard.remove)
    return held - removed  # a removal is final, whichever shard is read first
