"""The list view's picture: memories stored over time, stacked by type, as plain SVG geometry
the template draws. Pure arithmetic over (creation time, type) pairs; no I/O, no clock."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import msgspec

from shared.model import DAY_MS, MEMORY_TYPES, MemoryType, iso_ms

WIDTH: Final = 720
HEIGHT: Final = 150
# Room for the axis labels under the bars and the count above the tallest.
PLOT_TOP: Final = 14
PLOT_BOTTOM: Final = 124
MAX_BARS: Final = 60
# The shortest span drawn, in days, so a new tenant's first day is one bar of a fortnight.
MIN_DAYS: Final = 14
_BUCKET_NAMES: Final = {1: "day", 7: "week"}


class Bar(msgspec.Struct, frozen=True, kw_only=True):
    """One type's part of one bucket's column; ``title`` is its tooltip."""

    x: float
    y: float
    width: float
    height: float
    memory_type: MemoryType
    title: str


class Chart(msgspec.Struct, frozen=True, kw_only=True):
    width: int
    height: int
    plot_bottom: int
    bars: tuple[Bar, ...]
    tallest: int
    bucket: str
    first_label: str
    last_label: str
    legend: tuple[tuple[MemoryType, int], ...]


def _bucket_days(span_days: int) -> int:
    """A day per bar when that fits in ``MAX_BARS``, else a week, else as many days as fit."""
    for days in (1, 7):
        if math.ceil(span_days / days) <= MAX_BARS:
            return days
    return math.ceil(span_days / MAX_BARS)


def chart(created: Sequence[tuple[int, MemoryType]], *, now_ms: int) -> Chart | None:
    """The picture of ``created`` up to ``now_ms``; None when there is nothing to draw."""
    if not created:
        return None
    last_day = max(now_ms, *(ms for ms, _ in created)) // DAY_MS
    first_day = min(last_day - MIN_DAYS + 1, min(ms for ms, _ in created) // DAY_MS)
    days = _bucket_days(last_day - first_day + 1)
    buckets = math.ceil((last_day - first_day + 1) / days)
    counts = [dict.fromkeys(MEMORY_TYPES, 0) for _ in range(buckets)]
    for ms, memory_type in created:
        counts[(ms // DAY_MS - first_day) // days][memory_type] += 1
    tallest = max(sum(bucket.values()) for bucket in counts)
    column = WIDTH / buckets
    scale = (PLOT_BOTTOM - PLOT_TOP) / tallest
    bars: list[Bar] = []
    for index, bucket in enumerate(counts):
        start = iso_ms((first_day + index * days) * DAY_MS)[:10]
        y = float(PLOT_BOTTOM)
        for memory_type in MEMORY_TYPES:
            count = bucket[memory_type]
            if not count:
                continue
            height = count * scale
            y -= height
            bars.append(
                Bar(
                    x=round(index * column + column * 0.1, 2),
                    y=round(y, 2),
                    width=round(column * 0.8, 2),
                    height=round(height, 2),
                    memory_type=memory_type,
                    title=f"{_period(start, days)}: {count} {memory_type}",
                )
            )
    totals = {t: sum(bucket[t] for bucket in counts) for t in MEMORY_TYPES}
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        plot_bottom=PLOT_BOTTOM,
        bars=tuple(bars),
        tallest=tallest,
        bucket=_BUCKET_NAMES.get(days, f"{days} days"),
        first_label=iso_ms(first_day * DAY_MS)[:10],
        last_label=iso_ms(last_day * DAY_MS)[:10],
        legend=tuple((t, n) for t, n in totals.items() if n),
    )


def _period(start: str, days: int) -> str:
    return start if days == 1 else f"{days} days from {start}"
