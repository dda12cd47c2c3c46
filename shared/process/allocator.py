"""glibc's malloc, told to give memory back: what keeps a long-running process's RSS near what it
actually holds.

Under load the processes allocate and free large blocks again and again: a forget copies a
tenant's scan snapshot (15 MB at 10,000 memories of 384 dimensions), a lexicon fold reads and
writes a tenant's merged.json, a counter read decodes the shards above the watermark. glibc's
defaults keep what such churn leaves behind: its mmap threshold rises to the largest block freed
(up to 32 MB), so later large blocks come from the heap and fragment it, and every thread that
allocates gets an arena of its own (up to 8 per CPU). In the soak (16 clients, 10,000 memories,
10 minutes) the API's RSS went 240 → 531 MiB with the defaults and 213 → 370 MiB with the three
settings below, at the same recall latency (docs/benchmarks.md).

The same settings can be given as glibc's environment variables; one that is set is left to it.
Elsewhere than glibc (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import platform
from collections.abc import Mapping
from typing import Final

logger = logging.getLogger(__name__)

# mallopt parameters (malloc.h), each with the variable glibc reads for it at startup.
_M_TRIM_THRESHOLD: Final = -1
_M_MMAP_THRESHOLD: Final = -3
_M_ARENA_MAX: Final = -8
SETTINGS: Final = (
    # Blocks of 128 KiB and more are mapped on their own and unmapped when freed (a fixed
    # threshold: setting it turns glibc's rising one off).
    ("MALLOC_MMAP_THRESHOLD_", _M_MMAP_THRESHOLD, 128 * 1024),
    # Free memory at the top of the heap goes back to the OS once past 128 KiB (glibc's own
    # threshold rises with its mmap threshold, to 64 MiB).
    ("MALLOC_TRIM_THRESHOLD_", _M_TRIM_THRESHOLD, 128 * 1024),
    # Two arenas: the event loop, the model's thread and the scan workers share them.
    ("MALLOC_ARENA_MAX", _M_ARENA_MAX, 2),
)


def tune_allocator(environ: Mapping[str, str]) -> dict[str, int]:
    """Apply SETTINGS through mallopt, except those ``environ`` sets; what was applied. Call
    once at process start, before the threads that allocate are started."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return {}
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return {}
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    applied: dict[str, int] = {}
    for variable, parameter, value in SETTINGS:
        if variable in environ:
            continue
        if mallopt(parameter, value) == 1:
            applied[variable] = value
    if applied:
        logger.info("allocator_tuned", extra={"settings": applied})
    return applied
