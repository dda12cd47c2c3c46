"""Frozen records, key codecs and how a text is split into terms (``tokens``): the bottom
layer, importing nothing else of ours."""

from shared.model.draft import (
    DRAFT_FIELDS,
    MAX_CATEGORY_BYTES,
    MAX_CONTENT_BYTES,
    MAX_TAG_BYTES,
    MAX_TAGS,
    MEMORY_TYPES,
    SCOPES,
    Draft,
    DraftField,
    MemoryType,
    Scope,
    check_limits,
    draft_values,
)
from shared.model.ids import (
    DAY_MS,
    MAX_ULID_TIME_MS,
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
from shared.model.memory import Hit, Memory, new_memory

__all__ = [
    "DAY_MS",
    "DRAFT_FIELDS",
    "MAX_CATEGORY_BYTES",
    "MAX_CONTENT_BYTES",
    "MAX_TAGS",
    "MAX_TAG_BYTES",
    "MAX_ULID_TIME_MS",
    "MEMORY_TYPES",
    "SCOPES",
    "Draft",
    "DraftField",
    "Hit",
    "IndexEntry",
    "KeywordHit",
    "Memory",
    "MemoryType",
    "Scope",
    "canonical_iso",
    "check_limits",
    "conversation_digest",
    "draft_values",
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
