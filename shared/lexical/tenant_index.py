"""One tenant's keyword index in this process, and what it has applied of the lexicon's shards:
enough to take a shard once, keep a removal final, and tell whether a fold absorbed exactly
what the index already holds (then only the watermark moves; see ``Lexicon._adopt_fold``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from shared.lexical.index import LexicalIndex
from shared.lexical.segments import (
    Documents,
    Labels,
    LexiconShard,
    MergedHeader,
    absorbed_digest,
)


@dataclass
class TenantLexicon:
    index: LexicalIndex
    watermark: str
    merged_etag: str | None
    # The shards above the watermark applied to the index, and the removals each made.
    applied: set[str]
    removed_by: dict[str, tuple[str, ...]] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    checked_at: float = field(default_factory=time.monotonic)

    def take(self, name: str, shard: LexiconShard) -> None:
        """Apply one shard (a removal is final: a later-read addition cannot undo it)."""
        self.note(name, shard)
        for memory_id in shard.remove:
            self.index.remove(memory_id)
        for memory_id, passages in shard.add.items():
            if memory_id not in self.removed:
                self.index.add(memory_id, passages, shard.labels.get(memory_id, ()))

    def note(self, name: str, shard: LexiconShard) -> None:
        """Record a shard as applied (``take``, or read into the index it was built from)."""
        self.applied.add(name)
        if shard.remove:
            self.removed_by[name] = tuple(shard.remove)
            self.removed.update(shard.remove)

    def holds_fold(self, header: MergedHeader) -> bool:
        """Whether this index already holds what the fold that wrote ``header`` absorbed: it
        started from this watermark, and its shards are exactly the ones applied up to its own.
        A shard this process never read, or one the fold missed, makes the digests differ."""
        if not header.absorbed or header.folded_from != self.watermark:
            return False
        upto = [name for name in self.applied if self.watermark < name <= header.watermark]
        return absorbed_digest(upto) == header.absorbed

    def adopt(self, header: MergedHeader, etag: str) -> None:
        """Move to the fold's watermark (see ``holds_fold``): what it absorbed is forgotten here
        as it is in merged.json, so this state is what a fresh load would build."""
        absorbed = {name for name in self.applied if name <= header.watermark}
        self.applied -= absorbed
        for name in absorbed:
            self.removed_by.pop(name, None)
        self.removed = {memory_id for ids in self.removed_by.values() for memory_id in ids}
        self.watermark = header.watermark
        self.merged_etag = etag


def build_tenant_lexicon(
    docs: Documents, labels: Labels, watermark: str, etag: str | None
) -> TenantLexicon:
    index = LexicalIndex()
    for memory_id, passages in docs.items():
        index.add(memory_id, passages, labels.get(memory_id, ()))
    return TenantLexicon(index=index, watermark=watermark, merged_etag=etag, applied=set())
