"""Corrections as events: replacement records, and the chains of versions they form."""

from shared.revisions.chain import EMPTY, Replacements
from shared.revisions.forgotten import provably_seen
from shared.revisions.log import ReplacementLog, read_replacements
from shared.storage.tenant_reads import DEFAULT_CACHE_TTL_MS

__all__ = [
    "DEFAULT_CACHE_TTL_MS",
    "EMPTY",
    "ReplacementLog",
    "Replacements",
    "provably_seen",
    "read_replacements",
]
