"""Lexicon objects in the state store, and the pure fold of shards into merged.json.

::

    lexicon/<tenant>/shard/<ulid>-<processId>.json   one write: memories added and removed
    lexicon/<tenant>/merged.json                     folded documents + watermark

The same shape as the counters (``shared.counters``), for the same reasons: nothing is modified in
place, a process writes keys only it will ever write, and a fold moves the watermark by
compare-and-swap, absorbing only shards older than the lag. Folding is simpler here: a document is
a memory id with its term counts, and memories are immutable, so adding the same document twice
is the same as adding it once, and a removal is final (ids are never reused). A shard read twice,
or read both in merged.json and on its own, therefore changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import msgspec

from shared.counters.fold import absorbable_names
from shared.lexical.tokens import terms

LEXICON_ROOT: Final = "lexicon/"
# Bumped whenever ``tokens`` changes what it yields: a merged.json of another version is rebuilt
# from the memories themselves (see lexicon.backfill), and shards of another version are ignored.
LEXICON_VERSION: Final = 1

Documents = dict[str, dict[str, int]]


class LexiconShard(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    v: int = LEXICON_VERSION
    add: Documents = msgspec.field(default_factory=dict)
    remove: list[str] = msgspec.field(default_factory=list)


class MergedLexicon(msgspec.Struct, frozen=True, kw_only=True):
    v: int = LEXICON_VERSION
    watermark: str = ""
    docs: Documents = msgspec.field(default_factory=dict)


_SHARD_DECODER: Final = msgspec.json.Decoder(LexiconShard)
_MERGED_DECODER: Final = msgspec.json.Decoder(MergedLexicon)
_ENCODER: Final = msgspec.json.Encoder()


def lexicon_prefix(tenant: str) -> str:
    return f"{LEXICON_ROOT}{tenant}/"


def lexicon_shard_prefix(tenant: str) -> str:
    return f"{lexicon_prefix(tenant)}shard/"


def lexicon_shard_key(tenant: str, name: str) -> str:
    return f"{lexicon_shard_prefix(tenant)}{name}"


def lexicon_merged_key(tenant: str) -> str:
    return f"{lexicon_prefix(tenant)}merged.json"


def term_counts(text: str) -> dict[str, int]:
    """What a memory is indexed as: each term and how often it occurs."""
    counts: dict[str, int] = {}
    for term in terms(text):
        counts[term] = counts.get(term, 0) + 1
    return counts


def encode(value: LexiconShard | MergedLexicon) -> str:
    return _ENCODER.encode(value).decode()


def decode_shard(body: str) -> LexiconShard | None:
    """None for a body that is unreadable or of another version: it is skipped, not fatal."""
    try:
        shard = _SHARD_DECODER.decode(body)
    except msgspec.DecodeError:
        return None
    return shard if shard.v == LEXICON_VERSION else None


def decode_merged(body: str) -> MergedLexicon | None:
    """None for a body that is unreadable or of another version: it is rebuilt."""
    try:
        merged = _MERGED_DECODER.decode(body)
    except msgspec.DecodeError:
        return None
    return merged if merged.v == LEXICON_VERSION else None


def apply(docs: Documents, shards: Iterable[LexiconShard]) -> Documents:
    """``docs`` with the shards' additions and then every removal applied (a new dict)."""
    result = dict(docs)
    removed: set[str] = set()
    for shard in shards:
        result.update(shard.add)
        removed.update(shard.remove)
    for memory_id in removed:
        result.pop(memory_id, None)
    return result


class LexiconFoldPlan(msgspec.Struct, frozen=True, kw_only=True):
    merged: MergedLexicon
    absorbed: tuple[str, ...]


def fold_lexicon(
    merged: MergedLexicon, shards: Mapping[str, LexiconShard], *, now_ms: int, lag_ms: int
) -> LexiconFoldPlan:
    """Absorb the shards older than the lag into ``merged`` and move the watermark to the
    largest of them; the rest stay above it for readers (see shared.counters.fold for why)."""
    absorbed = absorbable_names(shards, watermark=merged.watermark, now_ms=now_ms, lag_ms=lag_ms)
    if not absorbed:
        return LexiconFoldPlan(merged=merged, absorbed=())
    docs = apply(merged.docs, (shards[name] for name in absorbed))
    return LexiconFoldPlan(
        merged=MergedLexicon(watermark=absorbed[-1], docs=docs), absorbed=tuple(absorbed)
    )
