"""Progress of long work: tqdm's bar (count, rate, ETA) on a terminal, plain lines otherwise.

tqdm is the Python standard for progress bars; on a pipe or a log file its carriage-return
redraws are noise, so there one plain line is written every ``PLAIN_EVERY_S`` and at the end.
"""

from __future__ import annotations

import sys
import time
from typing import Final, TextIO

from tqdm import tqdm

PLAIN_EVERY_S: Final = 5.0


class Progress:
    def __init__(self, label: str, *, total: int | None, stream: TextIO = sys.stderr) -> None:
        self._label = label
        self._total = total
        self._stream = stream
        self._done = 0
        self._started = time.monotonic()
        self._shown = self._started
        self._bar = (
            tqdm(total=total, desc=label, unit="memories", file=stream, dynamic_ncols=True)
            if stream.isatty()
            else None
        )

    def advance(self, count: int) -> None:
        self._done += count
        if self._bar is not None:
            self._bar.update(count)
            return
        now = time.monotonic()
        if now - self._shown >= PLAIN_EVERY_S:
            self._shown = now
            self._line(now)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        else:
            self._line(time.monotonic())

    def _line(self, now: float) -> None:
        elapsed = max(now - self._started, 1e-9)
        rate = self._done / elapsed
        parts = [f"{self._label}: {self._done}" + (f"/{self._total}" if self._total else "")]
        parts.append(f"{rate:.1f} memories/s")
        if self._total and rate > 0:
            parts.append(f"ETA {max(0.0, (self._total - self._done) / rate):.0f} s")
        print(", ".join(parts), file=self._stream, flush=True)
