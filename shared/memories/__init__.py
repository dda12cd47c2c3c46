"""A memory's lifecycle in storage: what it is written as, in which order, and how it goes."""

from shared.memories.deleting import MemoryDeleter
from shared.memories.lifecycle import (
    DELETE_ORDER,
    WRITE_ORDER,
    memory_keys,
    new_memory,
    write_memory,
)

__all__ = [
    "DELETE_ORDER",
    "WRITE_ORDER",
    "MemoryDeleter",
    "memory_keys",
    "new_memory",
    "write_memory",
]
