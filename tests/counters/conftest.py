"""Counter tests run on real stores: the storage contract suite's fixtures, parametrised by
backend (an S3 entry in its ``BACKENDS`` covers these tests too)."""

from tests.storage.conftest import object_store, storage_config, stores

__all__ = ["object_store", "storage_config", "stores"]
