"""Export an mcp-memory-service database with its own exporter (``MemoryExporter``).

Run by tests/operator/test_import_sources.py with the Python of the venv .ci/run installs
mcp-memory-service into (tests/thirdparty/mcp-memory-service); the memories were stored through
its own ``memory_store`` MCP tool. Usage: ``python mcp_memory_service_export.py DB OUT``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp_memory_service.storage.sqlite_vec import (  # type: ignore[import-not-found]
    SqliteVecMemoryStorage,
)
from mcp_memory_service.sync.exporter import MemoryExporter  # type: ignore[import-not-found]


async def main(database: str, output: str) -> None:
    storage = SqliteVecMemoryStorage(database)
    await storage.initialize()
    result = await MemoryExporter(storage).export_to_json(Path(output))
    assert result["success"], result


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
