"""Frozen records, key codecs and how a text is split into terms (``tokens``): the bottom
layer, importing nothing else of ours."""

from shared.model.ids import (
    DAY_MS,
    canonical_iso,
    conversation_digest,
    inverted_time,
    iso_ms,
    new_ulid,
    parse_iso_ms,
    ulid_time_ms,
    wall_clock_ms,
)
from shared.model.keys import IndexEntry, index_key, index_prefix, parse_index_key
from shared.model.keyword_hit import KeywordHit
from shared.model.memory import MEMORY_TYPES, SCOPES, Hit, Memory, MemoryType, Scope, new_memory

__all__ = [
    "DAY_MS",
    "MEMORY_TYPES",
    "SCOPES",
    "Hit",
    "IndexEntry",
    "KeywordHit",
    "Memory",
    "MemoryType",
    "Scope",
    "canonical_iso",
    "conversation_digest",
    "index_key",
    "index_prefix",
    "inverted_time",
    "iso_ms",
    "new_memory",
    "new_ulid",
    "parse_index_key",
    "parse_iso_ms",
    "ulid_time_ms",
    "wall_clock_ms",
]
