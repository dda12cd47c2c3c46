"""The list view's picture: buckets, stacking and scale, from (creation time, type) pairs."""

from __future__ import annotations

from services.api.ui.chart import MAX_BARS, MIN_DAYS, PLOT_BOTTOM, PLOT_TOP, chart
from shared.model import DAY_MS, MemoryType

NOW_MS = 1_800_000_000_000
TODAY = NOW_MS // DAY_MS * DAY_MS


def test_nothing_stored_draws_nothing() -> None:
    assert chart([], now_ms=NOW_MS) is None


def test_a_new_tenant_is_a_fortnight_of_days_with_its_bar_last() -> None:
    picture = chart([(NOW_MS - 1000, "project"), (NOW_MS - 2000, "pattern")], now_ms=NOW_MS)
    assert picture is not None and picture.bucket == "day"
    assert {bar.memory_type for bar in picture.bars} == {"project", "pattern"}
    # Both in the last of MIN_DAYS columns, stacked to the top of the plot.
    column = picture.width / MIN_DAYS
    assert all(bar.x > column * (MIN_DAYS - 1) for bar in picture.bars)
    assert min(bar.y for bar in picture.bars) == PLOT_TOP
    assert sum(bar.height for bar in picture.bars) == PLOT_BOTTOM - PLOT_TOP
    assert picture.legend == (("project", 1), ("pattern", 1))


def test_a_long_history_is_drawn_in_weeks_then_in_wider_buckets() -> None:
    weeks = chart([(NOW_MS - 200 * DAY_MS, "reference")], now_ms=NOW_MS)
    assert weeks is not None and weeks.bucket == "week"
    years = chart([(NOW_MS - 3 * 365 * DAY_MS, "reference")], now_ms=NOW_MS)
    assert years is not None and years.bucket.endswith("days")
    assert len({bar.x for bar in years.bars}) <= MAX_BARS


def test_each_bucket_counts_its_own_days_by_type() -> None:
    created: list[tuple[int, MemoryType]] = [
        (TODAY - 3 * DAY_MS + 5, "project"),
        (TODAY - 3 * DAY_MS + 9, "project"),
        (TODAY - 3 * DAY_MS + 7, "conversation"),
        (TODAY + 1, "project"),
    ]
    picture = chart(created, now_ms=NOW_MS)
    assert picture is not None and picture.tallest == 3
    titles = sorted(bar.title for bar in picture.bars)
    day = picture.last_label
    assert f"{day}: 1 project" in titles
    assert any(title.endswith(": 2 project") for title in titles)
    assert any(title.endswith(": 1 conversation") for title in titles)
