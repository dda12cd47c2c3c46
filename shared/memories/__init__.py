"""A memory's lifecycle in storage: what it is written as, and in which order."""

from shared.memories.lifecycle import DELETE_ORDER, WRITE_ORDER, memory_keys, write_memory

__all__ = ["DELETE_ORDER", "WRITE_ORDER", "memory_keys", "write_memory"]
