"""Merging saved benchmark results: every speed run's target row is kept beside the last one's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.__main__ import merged
from bench._report import _headline, public_command


def results(
    commit: str, started_at: str, stages: list[str], p50: float, gauge: float
) -> dict[str, Any]:
    row = {"concurrency": 1, "p50_ms": p50, "p95_ms": p50 + 5, "cpu_ms_per_call": {"client": gauge}}
    speed = {"sizes": [{"size": 10_000, "recall": [row], "remember": []}]}
    return {
        "command": f"python -m bench --only {','.join(stages)}",
        "commit": commit,
        "started_at": started_at,
        "stages": stages,
        "load": {"start": [1.0, 1.0, 1.0], "end": [2.0, 2.0, 2.0]},
        **({"speed": speed} if "speed" in stages else {}),
    }


def saved(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_every_merged_speed_run_is_listed_and_the_last_one_is_judged(tmp_path: Path) -> None:
    paths = [
        saved(tmp_path, "counters", results("aaa", "day 1", ["counters"], 0, 0)),
        saved(tmp_path, "slow", results("bbb", "day 2 10:00", ["speed"], 16.3, 5.07)),
        saved(tmp_path, "fast", results("ccc", "day 2 11:00", ["speed"], 12.1, 3.88)),
    ]
    combined = merged(paths)
    assert [run["commit"] for run in combined["speed_runs"]] == ["bbb", "ccc"]
    assert "(its speed; commit ccc, day 2 11:00)" in combined["command"]
    text = "\n".join(_headline(combined["speed"], combined["speed_runs"]))
    assert "measured p50 12.1 ms, p95 17.1 ms: met." in text
    assert "the target was met in 1 of 2" in text
    assert "| day 2 10:00 | bbb | 16.3 | 21.3 | missed | 5.07 |" in text
    assert "| day 2 11:00 | ccc | 12.1 | 17.1 | met | 3.88 |" in text


def test_a_single_run_gets_no_runs_table(tmp_path: Path) -> None:
    combined = merged([saved(tmp_path, "one", results("ddd", "day 3", ["speed"], 14.0, 4.0))])
    text = "\n".join(_headline(combined["speed"], combined["speed_runs"]))
    assert "met." in text and "every speed run" not in text


def test_the_published_command_names_no_path_of_the_machine_it_ran_on() -> None:
    command = (
        "python -m bench --data /work/shared/bench-data --out /tmp/exp/speed5 --only speed; then "
        "python -m bench --data=/srv/data --out bench/results/run9 --only soak (its soak)"
    )
    assert public_command(command) == (
        "python -m bench --data DATA --out OUT --only speed; then "
        "python -m bench --data DATA --out OUT --only soak (its soak)"
    )
