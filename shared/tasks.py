"""Ending asyncio work that was started alongside other work and is no longer wanted."""

from __future__ import annotations

import asyncio
from typing import Any


def abandon(task: asyncio.Future[Any]) -> None:
    """Stop a task nobody will await, and mark a failure it already had as seen: asyncio would
    otherwise log it as "never retrieved". A task that succeeded is left as it is."""
    if not task.cancel() and not task.cancelled():
        task.exception()


__all__ = ["abandon"]
