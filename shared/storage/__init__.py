"""Storage: the two interfaces, the shared codec, and the factory that opens a backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from shared.process.lazy_exports import exports_on_first_use

if TYPE_CHECKING:
    from shared.storage.codec import to_metadata, vector_key
    from shared.storage.factory import open_stores
    from shared.storage.index import index_entries, index_tenants
    from shared.storage.interfaces import (
        MemoryRef,
        ObjectStore,
        StoredObject,
        Stores,
        VectorStore,
    )

# Read on first use: a process that needs one backend module (the embedded database's keeper)
# imports this package on the way and must not pay for the codec, numpy and the model.
_EXPORTS: Final = {
    "MemoryRef": "shared.storage.interfaces",
    "ObjectStore": "shared.storage.interfaces",
    "StoredObject": "shared.storage.interfaces",
    "Stores": "shared.storage.interfaces",
    "VectorStore": "shared.storage.interfaces",
    "index_entries": "shared.storage.index",
    "index_tenants": "shared.storage.index",
    "open_stores": "shared.storage.factory",
    "to_metadata": "shared.storage.codec",
    "vector_key": "shared.storage.codec",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)


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
