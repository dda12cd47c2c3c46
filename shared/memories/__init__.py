"""A memory's lifecycle in storage: what it is written as, in which order, and how it goes."""

from shared.memories.deleting import MemoryDeleter
from shared.memories.lifecycle import (
    DELETE_ORDER,
    WRITE_ORDER,
    entry_keys,
    memory_keys,
    write_memory,
)

__all__ = [
    "DELETE_ORDER",
    "WRITE_ORDER",
    "MemoryDeleter",
    "entry_keys",
    "memory_keys",
    "write_memory",
]
