"""The soak's growth figure: a line through every sample, so one high sample is not a trend."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bench._soak import endpoint_growth, fitted_growth


def samples(values: Sequence[float]) -> list[dict[str, float]]:
    return [{"t_s": 60.0 * i, "rss_mib": v} for i, v in enumerate(values)]


def test_a_steady_rise_is_read_as_its_growth() -> None:
    rising = samples([400 + 4 * i for i in range(11)])  # 400 → 440 over the span
    assert fitted_growth(rising) == pytest.approx(0.10)
    assert endpoint_growth(rising) == pytest.approx(0.10)


def test_a_level_series_with_one_high_last_sample_is_not_growth() -> None:
    # 100 samples of a third of the soak, swinging by ±15 MiB around 415, then one at 450.
    level = samples([415 + (15 if i % 3 == 0 else -10) for i in range(100)] + [450])
    assert endpoint_growth(level) == pytest.approx(450 / 430 - 1)
    assert abs(fitted_growth(level)) < 0.01


def test_too_few_samples_read_as_no_growth() -> None:
    assert fitted_growth(samples([400])) == endpoint_growth(samples([400])) == 0.0
