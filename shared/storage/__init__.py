"""Storage: the two interfaces, the shared codec, and the factory that opens a backend."""

from shared.storage.codec import to_metadata, vector_key
from shared.storage.factory import open_stores
from shared.storage.index import index_entries, index_tenants
from shared.storage.interfaces import MemoryRef, ObjectStore, StoredObject, Stores, VectorStore

__all__ = [
    "MemoryRef",
    "ObjectStore",
    "StoredObject",
    "Stores",
    "VectorStore",
    "index_entries",
    "index_tenants",
    "open_stores",
    "to_metadata",
    "vector_key",
]
