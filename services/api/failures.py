"""What a caller is told when a tool call fails: which store failed and what to do next.

Nothing more. An error's own message is for the operator's log line and may name an endpoint, a
bucket, a key (which carries the tenant) or a driver's words; a model has no use for them, and
they describe our infrastructure to whoever reads the conversation. So the caller's sentence is
built here from the error's class and the store it names (``StorageError.store``), and only
messages written for the caller pass through: a budget refusal, which names the field to shorten.
"""

from __future__ import annotations

from typing import Final

from shared.errors import (
    BudgetError,
    ConflictError,
    EmbeddingError,
    StorageError,
    StorageTimeoutError,
    StorageUnavailableError,
)

RETRY_LATER: Final = "try again in a minute"
UNKNOWN_STORE: Final = "the store"


def tool_timeout_text(timeout_s: float) -> str:
    """The whole call outlived TOOL_TIMEOUT_S (the embedder, or many slow storage calls)."""
    return f"the request did not finish within {timeout_s:g} s; {RETRY_LATER}"


def caller_text(error: Exception) -> str:
    """The sentence a caller reads for ``error`` (after "the memory store could not complete
    this request — ")."""
    if isinstance(error, BudgetError):
        return str(error)
    if isinstance(error, StorageError):
        store = error.store or UNKNOWN_STORE
        if isinstance(error, StorageTimeoutError):
            return f"{store} did not answer within {error.timeout_s:g} s; {RETRY_LATER}"
        if isinstance(error, StorageUnavailableError):
            return f"{store} could not be reached; {RETRY_LATER}"
        return (
            f"{store} could not complete the operation; {RETRY_LATER}, and report it to the "
            "operator if it keeps failing"
        )
    if isinstance(error, ConflictError):
        return "another request changed the same record at the same moment; try again"
    if isinstance(error, EmbeddingError):
        # Worded for the operator who configured the model, and naming no storage; kept so a
        # model mismatch (its dimensions) is visible from the client too.
        return str(error)
    return f"internal error; {RETRY_LATER}, and report it to the operator if it keeps failing"


__all__ = ["RETRY_LATER", "caller_text", "tool_timeout_text"]
