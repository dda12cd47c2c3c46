"""A full disk is named as such (issue 42, item 12): with the embedded PostgreSQL's data dir on
a filesystem that has no space left, remember tells the model the store's disk is full (not
that PostgreSQL could not be reached), ``/ready`` says so with a 503, and both recover once
space is freed. A real embedded server on a small tmpfs of the test's own (mounting one needs
root, as the embedded server's tests run), the real runtime and the official MCP client."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest

from services.api.runtime import open_runtime
from shared.config import load_config
from shared.storage.postgres.embedded import acquire_server, release_server
from tests.api.conftest import McpServerFactory, mcp_session
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings

TMPFS_MB = 160


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A tmpfs of ``TMPFS_MB`` MB, unmounted after the test."""
    mount = Path(tempfile.mkdtemp(prefix="mcp-memory-full-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MB}m,mode=0777", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        mount.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        with contextlib.suppress(OSError):
            mount.rmdir()


def fill(path: Path) -> None:
    """Write ``path`` until its filesystem has no byte left."""
    chunk = b"\0" * (1 << 20)
    with path.open("wb", buffering=0) as ballast:
        while True:
            try:
                ballast.write(chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
                break
        with contextlib.suppress(OSError):
            while True:
                ballast.write(b"\0" * 4096)


async def remember(url: str, content: str) -> str:
    async with mcp_session(url, headers={"X-Memory-Tenant": "acme"}) as client:
        result = await client.call_tool("remember", {"content": content})
    (text,) = result.content
    assert isinstance(text, types.TextContent)
    return text.text


async def ready(url: str) -> tuple[int, dict[str, str]]:
    async with httpx2.AsyncClient() as http:
        response = await http.get(url.removesuffix("/mcp") + "/ready")
    return response.status_code, response.json()


@pytest.fixture(params=["embedded", "database_url"])
def server_env(request: pytest.FixtureRequest, small_disk: Path) -> Iterator[dict[str, str]]:
    """``--local`` on the small disk (its free space is visible), or the same server reached
    by ``DATABASE_URL``, as an external one is (only its answers tell)."""
    data_dir = small_disk / "data"
    if request.param == "embedded":
        yield {"data_dir": str(data_dir)}
        return
    url = acquire_server(data_dir)
    try:
        yield {"DATABASE_URL": url}
    finally:
        release_server(data_dir)


async def test_a_full_disk_is_named_to_the_model_and_by_readiness_and_both_recover(
    small_disk: Path,
    server_env: dict[str, str],
    mcp_server_factory: McpServerFactory,
    openai_embeddings: FakeOpenAIEmbeddings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    environ = {
        "EMBEDDING_PROVIDER": "openai",
        "EMBEDDING_BASE_URL": openai_embeddings.base_url,
        "EMBEDDING_API_KEY": openai_embeddings.api_key,
    }
    data_dir = server_env.pop("data_dir", None)
    config = load_config(
        {**environ, **server_env},
        local=data_dir is not None,
        data_dir=Path(data_dir) if data_dir is not None else None,
    )
    url = await mcp_server_factory(runtime_factory=open_runtime, config=config)
    assert "Stored as" in await remember(url, "Builds use Node 20.")
    assert (await ready(url))[0] == 200
    ballast = small_disk / "ballast"
    fill(ballast)
    # Long enough that its row needs new pages (TOAST), which a full disk cannot give.
    secret = "The release checklist, step by step: " + "verify the signed tag. " * 1200
    text = await remember(url, secret)
    assert text.startswith("Error: "), text
    assert "no space left" in text and "could not be reached" not in text, text
    status, body = await ready(url)
    assert status == 503 and "no space left" in body["reason"], body
    assert "verify the signed tag" not in caplog.text  # the log never holds content
    os.remove(ballast)
    assert "Stored as" in await remember(url, secret)
    assert await ready(url) == (200, {"status": "ready"})
