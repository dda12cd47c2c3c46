"""Import boundaries: PostgreSQL never loads the AWS SDK, and only _datastore knows asyncpg."""

from __future__ import annotations

import re
from pathlib import Path

from tests.storage.postgres._boot import REPO_ROOT, start_boot

_DRIVER_USE = re.compile(r"^\s*(import asyncpg|from asyncpg)|asyncpg\.\w", re.MULTILINE)


def test_opening_postgresql_stores_never_imports_aiobotocore(pg_url: str) -> None:
    # The boot script asserts "aiobotocore" not in sys.modules after opening and using the stores.
    process = start_boot(DATABASE_URL=pg_url)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "BOOTED" in stdout


def test_only_the_datastore_module_touches_the_driver() -> None:
    allowed = REPO_ROOT / "shared" / "storage" / "postgres" / "_datastore.py"
    offenders = [
        str(path.relative_to(REPO_ROOT))
        for root in ("shared", "services")
        for path in Path(REPO_ROOT, root).rglob("*.py")
        if path != allowed and _DRIVER_USE.search(path.read_text())
    ]
    assert offenders == []
