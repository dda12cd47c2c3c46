"""What the counters tell the process's metrics, without shared/ ever importing prometheus."""

from __future__ import annotations

from typing import Protocol


class CounterEvents(Protocol):
    """Observer of the counter machinery; the API's metrics implement it."""

    def shard_backlog(self, shards: int) -> None:
        """A reader saw this many shards above the watermark of one tenant."""

    def cas_conflict(self) -> None:
        """A fold lost its compare-and-swap on merged.json; someone else folded first."""

    def flush_failed(self) -> None:
        """A shard write failed; its counts are lost, by design."""

    def fold_seconds(self, seconds: float) -> None:
        """How long one background fold took, successful or not."""


class NoCounterEvents:
    """The default observer: counts nothing."""

    def shard_backlog(self, shards: int) -> None:
        pass

    def cas_conflict(self) -> None:
        pass

    def flush_failed(self) -> None:
        pass

    def fold_seconds(self, seconds: float) -> None:
        pass
