"""The tools run over real operations: the operations' fixtures, shared."""

from tests.operations.conftest import clock, local_embedder, ops, stores  # noqa: F401  (fixtures)
