"""The one exception tree of mcp-memory.

Every error the project raises descends from :class:`ServiceError`, and the branches follow what
the caller does next::

    ServiceError
    ├── BootError                   a refusal to start, already worded for the operator
    ├── ConfigError                 bad environment or flags: stop before the port is bound
    ├── InvalidInputError           a caller's argument or header broke a rule: tell them which
    ├── NotFoundError               the thing named does not exist (for this tenant)
    ├── ConflictError               a conditional write lost (compare-and-swap): someone else won
    ├── StorageError                the memory or state store failed
    │   ├── StorageUnavailableError     it could not be reached or set up (boot stops on this)
    │   │   └── StorageTimeoutError         a call to it outlived its deadline (a stalled store)
    │   ├── StorageFullError            its disk is full: no write succeeds until space is freed
    │   ├── SchemaError                 the PostgreSQL schema could not be created
    │   └── BudgetError                 a record exceeds the vector metadata budget
    ├── EmbeddingError              the embedder failed or returned something unusable
    │   └── GraphPatternError           the model graph is not the export the rewrite knows
    ├── DocsError                   the documentation knowledge base could not be searched
    ├── RefusedError                an operator's request refused whole before any write
    └── InvariantError              a value broke one of the code's own rules: a bug, not input

Driver exceptions (asyncpg, botocore) are translated into these in one place per backend and
raised ``from`` the original, so callers never see a driver type.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Root of every error mcp-memory raises on purpose."""


class BootError(ServiceError):
    """A process refuses to start; the message is already worded for the operator."""


class ConfigError(ServiceError):
    """The configuration is invalid; the message names the variable and the rule."""


class InvalidInputError(ServiceError):
    """A tool argument or request header broke a rule.

    Attributes:
        field: the argument or header that was wrong, as the caller spelled it.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotFoundError(ServiceError):
    """The named record does not exist for this tenant."""


class ConflictError(ServiceError):
    """A conditional write's precondition failed (if-match or if-none-match)."""


class StorageError(ServiceError):
    """The memory or state store could not complete an operation.

    The message is for the operator's log: it may name an endpoint, a bucket or a key. What a
    caller (a model) may be told is only which store failed.

    Attributes:
        store: which store failed, as a caller may read it ("S3 Vectors", "S3", "PostgreSQL");
            a product, never an address. None when the raiser cannot tell.
    """

    def __init__(self, message: str, *, store: str | None = None) -> None:
        super().__init__(message)
        self.store = store


class StorageUnavailableError(StorageError):
    """The store could not be reached or opened."""


class StorageTimeoutError(StorageUnavailableError):
    """A storage call did not finish within its deadline (``STORAGE_TIMEOUT_S``).

    Attributes:
        operation: what was called, as the storage metrics name it (``vector_query``, ...).
        timeout_s: the deadline it outlived.
    """

    def __init__(self, message: str, *, store: str, operation: str, timeout_s: float) -> None:
        super().__init__(message, store=store)
        self.operation = operation
        self.timeout_s = timeout_s


class StorageFullError(StorageError):
    """The store's disk has no space left: writes fail until the operator frees space, while
    reads still work. Not an outage, and not worth a retry in a minute."""


class SchemaError(StorageError):
    """The PostgreSQL schema (or the pgvector extension) could not be created."""


class BudgetError(StorageError):
    """A memory's metadata exceeds what the vector store accepts; the message names the field."""


class EmbeddingError(ServiceError):
    """The embedding provider failed, or returned a vector that cannot be stored."""


class GraphPatternError(EmbeddingError):
    """The model is not the dynamo export of a BERT encoder the graph rewrite knows (it is then
    loaded as it is)."""


class DocsError(ServiceError):
    """The documentation knowledge base could not be searched."""


class RefusedError(ServiceError):
    """An operator's request refused as a whole before anything was written: an import line
    that is not a record, links that would corrupt a chain, a target of another width, a path
    that cannot be used. The message says which line, flag or link, and why."""


class InvariantError(ServiceError):
    """A value broke a rule of the code itself (a ULID out of range, vectors of the wrong shape):
    a bug to report, never something a caller sent."""
