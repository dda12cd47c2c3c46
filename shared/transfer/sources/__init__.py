"""Other memory servers' exports, converted to our import records (one module per format).

Each converter reads its source whole and returns a ``Conversion``: the records, each with
where it came from, and what it left out and why. ``running`` puts them through the one import
path, so the limits, refusals and dedup by id are the import's own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from shared.transfer.sources import basic_memory, doobidoo, mem0, server_memory
from shared.transfer.sources.common import Conversion, Skipped, SourceError, Taken

Converter = Callable[[Path, str], Conversion]

# The names ``mcp-memory import --from`` takes.
FORMATS: Final[dict[str, Converter]] = {
    "server-memory": server_memory.convert,
    "mcp-memory-service": doobidoo.convert,
    "mem0": mem0.convert,
    "basic-memory": basic_memory.convert,
}
# The one format read from a folder rather than a file.
FOLDER_FORMATS: Final = frozenset({"basic-memory"})

__all__ = ["FOLDER_FORMATS", "FORMATS", "Conversion", "Skipped", "SourceError", "Taken"]
