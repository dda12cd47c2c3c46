"""The real entry point, ``services.api.main.run``, with the test catalogue's runtime.

Run as ``python -m tests.api._serve_test_runtime MODE [mcp-memory-api flags]``. MODE ``serve``
serves the test catalogue and, on exit, logs ``test_runtime_exit_started``, waits
``TEST_RUNTIME_EXIT_S`` (standing in for the final counter flush) and logs
``test_runtime_flushed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator

from services.api.main import run
from shared.config import Config
from tests.api._catalogue import TEST_CATALOGUE, CatalogueRuntime

logger = logging.getLogger("tests.api.test_runtime")


@contextlib.asynccontextmanager
async def serving_runtime(config: Config) -> AsyncIterator[CatalogueRuntime]:
    yield CatalogueRuntime(catalogue=TEST_CATALOGUE)
    logger.info("test_runtime_exit_started")
    await asyncio.sleep(float(os.environ.get("TEST_RUNTIME_EXIT_S", "0")))
    logger.info("test_runtime_flushed")


if __name__ == "__main__":
    if sys.argv[1] != "serve":
        sys.exit(f"unknown mode {sys.argv[1]!r}")
    sys.exit(run(sys.argv[2:], open_runtime=serving_runtime))
