"""The lexicon as it stands in the state store: shards written and read, the documents it holds
(reconcile compares them with the vectors), and a tenant's first merged.json, built from its
shards and from the memories none of them adds (those written before the keyword leg existed).
The per-process index over it is ``shared.lexical.lexicon``; the fold is the shard log's
(``LEXICON_LOG``)."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Final

from shared.errors import ConflictError, StorageError
from shared.lexical.segments import (
    LEXICON_LAYOUT,
    Documents,
    Labels,
    LexiconShard,
    MergedLexicon,
    apply,
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
    objects: ObjectStore,
    vectors: VectorStore,
    tenant: str,
    *,
    etag: str | None,
    shards: Collection[LexiconShard] = (),
) -> tuple[MergedLexicon, str | None, bool]:
    """merged.json built for every memory of the tenant, written unless another process wrote
    one first (then that one is used); its etag, and whether this call wrote it.

    ``shards``: the tenant's shards, all of them (no fold ran before merged.json exists). A
    memory one of them adds is taken as that shard indexed it, the same terms its content would
    give now (a shard of another version is never read); only the memories none adds (written
    before the keyword leg existed) are read and indexed here. A tenant written since has a
    shard for each of its memories, and its first recall reads none of their contents.

    Raises:
        StorageError: a read or write failed, or merged.json changed into something unreadable.
    """
    held, held_labels = apply({}, {}, shards)
    ids: list[str] = []
    async for entries in index_entries(objects, tenant):
        ids.extend(entry.memory_id for entry in entries)
    docs: Documents = {i: held[i] for i in ids if i in held}
    labels: Labels = {i: held_labels[i] for i in docs if i in held_labels}
    missing = [i for i in ids if i not in held]
    for start in range(0, len(missing), BACKFILL_BATCH):
        batch = LexiconShard.of(await vectors.get(tenant, missing[start : start + BACKFILL_BATCH]))
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
    logger.info(
        "lexicon_backfilled",
        extra={"tenant": tenant, "documents": len(docs), "read": len(missing)},
    )
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
