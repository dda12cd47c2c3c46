"""Thread pools are sized by the CPUs a process can use, its container's limit included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared.process.cpus import quota_cpus, usable_cpus


@pytest.mark.parametrize(
    ("line", "cpus"),
    [
        ("max 100000\n", None),  # no limit
        ("100000 100000\n", 1),
        ("150000 100000\n", 2),  # a limit of 1.5 CPUs still keeps two threads busy part-time
        ("50000 100000\n", 1),  # half a CPU is still one thread
        ("400000 100000", 4),
        ("", None),
        ("garbage here", None),
        ("0 100000", None),
    ],
)
def test_a_cgroup_cpu_max_line_reads_as_whole_cpus(line: str, cpus: int | None) -> None:
    assert quota_cpus(line) == cpus


def test_a_container_limit_caps_the_affinity_mask(tmp_path: Path) -> None:
    mask = len(os.sched_getaffinity(0))
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("100000 100000\n")
    assert usable_cpus(cpu_max) == 1
    cpu_max.write_text(f"{(mask + 8) * 100000} 100000\n")
    assert usable_cpus(cpu_max) == mask  # a limit above the mask does not add CPUs
    cpu_max.write_text("max 100000\n")
    assert usable_cpus(cpu_max) == mask
    assert usable_cpus(tmp_path / "absent") == mask  # no cgroup v2: the mask is all there is
