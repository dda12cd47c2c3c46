"""Lexicon objects in the state store, and the pure fold of shards into merged.json.

::

    lexicon/<tenant>/shard/<ulid>-<processId>.json   one write: memories added and removed
    lexicon/<tenant>/merged.json                     folded documents + watermark

A use of the shard log (``shared.storage.shardlog``), beside the counters': nothing is modified in
place, a process writes keys only it will ever write, and a fold moves the watermark by
compare-and-swap, absorbing only shards older than the lag. Folding is simpler here: a document is
a memory id with its passages' term counts, and the terms of its labels (category and tags) when
it has any, and memories are immutable, so adding the same document twice is the same as adding
it once, and a removal is final (ids are never reused). A shard read twice, or read both in
merged.json and on its own, therefore changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol, TypeVar

import msgspec

from shared.model import Memory
from shared.model.tokens import terms
from shared.storage.interfaces import StoredObject
from shared.storage.shardlog import ShardLayout, ShardLog

LEXICON_ROOT: Final = "lexicon/"
# Bumped whenever what a memory is indexed as changes (``tokens``, passages): a merged.json of
# another version is rebuilt from the memories themselves (see lexicon.backfill), and shards of
# another version are ignored. 4: a document is its passages' term counts. 5: and its labels'
# terms (``labels``), so a tenant indexed before labels were is rebuilt with them.
LEXICON_VERSION: Final = 5
# Terms per passage (see shared.lexical.index): chosen among 32-200 on the long chats, with
# LoCoMo unchanged (docs/benchmarks.md, "Passages"); overlapping passages gained nothing over
# adjacent ones and cost twice the entries.
PASSAGE_TERMS: Final = 64

# A memory id and its passages, each a term -> count map.
Passages = list[dict[str, int]]
Documents = dict[str, Passages]
# A memory id and the terms of its category and tags, for the memories that have any: beside
# the passages rather than inside them, so a memory without labels is stored as before.
Labels = dict[str, list[str]]
D = TypeVar("D")


class LexiconShard(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    v: int = LEXICON_VERSION
    add: Documents = msgspec.field(default_factory=dict)
    # The labels of memories in ``add`` (a removal drops them with the passages).
    labels: Labels = msgspec.field(default_factory=dict)
    remove: list[str] = msgspec.field(default_factory=list)

    @classmethod
    def of(cls, memories: Iterable[Memory]) -> LexiconShard:
        """The shard that adds these memories: each one's passages and labels."""
        held = list(memories)
        return cls(
            add={m.id: passage_counts(m.content) for m in held},
            labels={m.id: found for m in held if (found := label_terms(m))},
        )


class MergedHeader(msgspec.Struct, frozen=True, kw_only=True):
    """merged.json without its documents: decoding it skips them without building them."""

    v: int = LEXICON_VERSION
    watermark: str = ""
    # What the fold that wrote this absorbed: the watermark it started from and a digest of the
    # shard names (see ``absorbed_digest``). A reader that has applied exactly those shards on
    # top of ``folded_from`` already holds these documents, and takes the new watermark without
    # reading them again (``Lexicon`` does). Empty when a backfill wrote it.
    folded_from: str = ""
    absorbed: str = ""


class MergedLexicon(MergedHeader, frozen=True, kw_only=True):
    docs: Documents = msgspec.field(default_factory=dict)
    labels: Labels = msgspec.field(default_factory=dict)


class FoldingLexicon(MergedHeader, frozen=True, kw_only=True):
    """merged.json as a fold reads and writes it: each document left as its JSON text. A fold
    never looks inside a document, and decoding them into dicts would make several times the
    small objects on every fold, which the allocator keeps as fragments."""

    docs: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)
    labels: Labels = msgspec.field(default_factory=dict)


_SHARD_DECODER: Final = msgspec.json.Decoder(LexiconShard)
_MERGED_DECODER: Final = msgspec.json.Decoder(MergedLexicon)
_HEADER_DECODER: Final = msgspec.json.Decoder(MergedHeader)
_FOLDING_DECODER: Final = msgspec.json.Decoder(FoldingLexicon)
_ENCODER: Final = msgspec.json.Encoder()


# The lexicon's shard log (shared.storage.shardlog): the same layout as the counters', under
# lexicon/.
LEXICON_LAYOUT: Final = ShardLayout(LEXICON_ROOT)


def passage_counts(text: str) -> Passages:
    """What a memory is indexed as: its terms in runs of ``PASSAGE_TERMS``, each run's terms
    with how often they occur in it. A text without terms is one empty passage."""
    passages: Passages = []
    counts: dict[str, int] = {}
    held = 0
    for term in terms(text):
        if held == PASSAGE_TERMS:
            passages.append(counts)
            counts, held = {}, 0
        counts[term] = counts.get(term, 0) + 1
        held += 1
    passages.append(counts)
    return passages


def label_terms(memory: Memory) -> list[str]:
    """The terms of a memory's category and tags, each once, in order: what a query made of
    its labels meets (see ``shared.lexical.index``)."""
    found = terms(" ".join([memory.category or "", *memory.tags]))
    return list(dict.fromkeys(found))


def encode(value: LexiconShard | MergedLexicon | FoldingLexicon) -> str:
    return _ENCODER.encode(value).decode()


class _Versioned(Protocol):
    @property
    def v(self) -> int: ...


V = TypeVar("V", bound=_Versioned)


def _decoded(decoder: msgspec.json.Decoder[V], body: str) -> V | None:
    try:
        value = decoder.decode(body)
    except msgspec.DecodeError:
        return None
    return value if value.v == LEXICON_VERSION else None


def decode_shard(body: str) -> LexiconShard | None:
    """None for a body that is unreadable or of another version: it is skipped, not fatal."""
    return _decoded(_SHARD_DECODER, body)


def decode_merged(body: str) -> MergedLexicon | None:
    """None for a body that is unreadable or of another version: it is rebuilt."""
    return _decoded(_MERGED_DECODER, body)


def decode_for_fold(body: str) -> FoldingLexicon | None:
    """None for a body that is unreadable or of another version (see ``decode_merged``)."""
    return _decoded(_FOLDING_DECODER, body)


def decode_merged_header(body: str) -> MergedHeader | None:
    """None for a body that is unreadable or of another version."""
    return _decoded(_HEADER_DECODER, body)


def absorbed_digest(names: Iterable[str]) -> str:
    """One fold's absorbed shard names, as a short digest: what merged.json records of them
    instead of the names (a fold of a long backlog absorbs hundreds of thousands)."""
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()[:32]


def apply(
    docs: Documents, labels: Labels, shards: Iterable[LexiconShard]
) -> tuple[Documents, Labels]:
    """``docs`` and ``labels`` with the shards' additions and then every removal applied (new
    dicts)."""
    held = list(shards)
    return _applied(docs, held, _as_passages), _labels_applied(labels, held)


def _applied(
    docs: Mapping[str, D], shards: Iterable[LexiconShard], as_doc: Callable[[Passages], D]
) -> dict[str, D]:
    result = dict(docs)
    removed: set[str] = set()
    for shard in shards:
        result.update((memory_id, as_doc(passages)) for memory_id, passages in shard.add.items())
        removed.update(shard.remove)
    for memory_id in removed:
        result.pop(memory_id, None)
    return result


def _labels_applied(labels: Labels, shards: Iterable[LexiconShard]) -> Labels:
    result = dict(labels)
    removed: set[str] = set()
    for shard in shards:
        result.update(shard.labels)
        removed.update(shard.remove)
    for memory_id in removed:
        result.pop(memory_id, None)
    return result


def _as_passages(passages: Passages) -> Passages:
    return passages


def _as_raw(passages: Passages) -> msgspec.Raw:
    return msgspec.Raw(_ENCODER.encode(passages))


def absorb(
    merged: FoldingLexicon, shards: Mapping[str, LexiconShard], names: Sequence[str]
) -> FoldingLexicon:
    """``merged`` with the shards ``names`` (ascending, all older than the lag) applied and
    the watermark at the last of them; the fold's start and a digest of what it absorbed are
    recorded for readers (see ``MergedHeader``). A name without a shard moves the watermark
    past it all the same."""
    absorbed = [shards[name] for name in names if name in shards]
    return FoldingLexicon(
        watermark=names[-1],
        folded_from=merged.watermark,
        absorbed=absorbed_digest(names),
        docs=_applied(merged.docs, absorbed, _as_raw),
        labels=_labels_applied(merged.labels, absorbed),
    )


class LexiconFolding:
    """merged.json is every document; a shard is memories added and removed. A tenant without
    a readable merged.json of this version is not folded: only a backfill, which reads the
    memories themselves, may create it, or the memories of a 0.9.0 tenant would never be
    indexed."""

    layout: ShardLayout = LEXICON_LAYOUT
    name: str = "lexicon"

    def start(self, stored: StoredObject | None, tenant: str) -> FoldingLexicon | None:
        return decode_for_fold(stored.body) if stored is not None else None

    def watermark(self, merged: FoldingLexicon) -> str:
        return merged.watermark

    def absorb(
        self, merged: FoldingLexicon, bodies: Mapping[str, str], names: Sequence[str]
    ) -> FoldingLexicon:
        shards = {name: decode_shard(body) for name, body in bodies.items()}
        return absorb(merged, {n: shard for n, shard in shards.items() if shard is not None}, names)

    def encode(self, merged: FoldingLexicon) -> str:
        return encode(merged)


LEXICON_LOG: Final = ShardLog(LexiconFolding())
