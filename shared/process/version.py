"""Which release this is. pyproject.toml is the one place the version is written; every process
reads it back from the installed package's metadata, and tests/test_version.py keeps every other
mention (the changelog, the images, the manifests, the docs) equal to it."""

from __future__ import annotations

from importlib.metadata import version
from typing import Final

DISTRIBUTION: Final = "mcp-memory"


def installed_version() -> str:
    """The installed distribution's version (pyproject's, as of the last install)."""
    return version(DISTRIBUTION)
