"""How many CPUs this process can actually use, for sizing its own thread pools.

The affinity mask says which CPUs the process may run on; a container's CPU limit (cgroup v2
``cpu.max``) says how much of them it may use. In a Kubernetes pod limited to one CPU on a
16-core node the mask still lists 16, and sizing the model's or the scan's threads by it would
have them throttled by the quota in the middle of every call.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Final

CGROUP_CPU_MAX: Final = Path("/sys/fs/cgroup/cpu.max")


def quota_cpus(cpu_max: str) -> int | None:
    """CPUs a cgroup v2 ``cpu.max`` line ("<quota> <period>", or "max <period>") allows,
    rounded up; None when it sets no limit or cannot be read."""
    fields = cpu_max.split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, math.ceil(quota / period))


def usable_cpus(cpu_max_path: Path = CGROUP_CPU_MAX) -> int:
    """The CPUs in the affinity mask, capped by the container's CPU limit when there is one."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    try:
        limit = quota_cpus(cpu_max_path.read_text())
    except OSError:  # no cgroup v2 here: the mask is all there is
        limit = None
    return max(1, min(available, limit) if limit is not None else available)
