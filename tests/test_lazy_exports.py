"""A package's re-exports read on first use: the keeper of the embedded database imports its
package without the storage stack behind it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shared.process.lazy_exports import exports_on_first_use


def test_a_name_is_read_from_its_module_and_any_other_is_refused_by_name() -> None:
    attribute = exports_on_first_use("pkg", {"dumps": "json"})
    import json

    assert attribute("dumps") is json.dumps
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'loads'"):
        attribute("loads")


def test_the_keeper_imports_neither_asyncpg_nor_numpy() -> None:
    probe = (
        "import sys, shared.storage.postgres.keeper; "
        "print(sorted(m for m in ('asyncpg', 'numpy', 'shared.storage.codec') if m in sys.modules))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert shown == "[]"
