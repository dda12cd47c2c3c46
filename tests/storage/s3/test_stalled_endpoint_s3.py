"""A stalled S3 endpoint (it accepts and never answers) is given up on by the AWS client itself,
within ``STORAGE_TIMEOUT_S`` per attempt, so the boot and the compactor, which have no tool-call
deadline around them, are bounded too. Before, each attempt waited out a 30 s read timeout."""

from __future__ import annotations

import asyncio
import time

import pytest

from shared.config import load_config
from shared.errors import StorageUnavailableError
from shared.storage import open_stores
from tests.fakes.aws import MakeS3Environ
from tests.fakes.tcp_faults import TcpFaultProxy

STORAGE_TIMEOUT_S = 0.5
# Three attempts of half a second, the standard mode's backoffs between them (at most 1 s, then
# 2 s), and room for a loaded machine. Before, one attempt alone waited 30 s.
BOUND_S = 3 * STORAGE_TIMEOUT_S + 3 + 2


async def test_boot_against_a_stalled_s3_vectors_stops_within_the_client_timeouts(
    make_s3_environ: MakeS3Environ,
    s3vectors_server: tuple[object, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    environ = await make_s3_environ()
    async with TcpFaultProxy.running(s3vectors_server[1]) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3VECTORS", proxy.url)
        proxy.mode = "stall"
        config = load_config({**environ, "STORAGE_TIMEOUT_S": str(STORAGE_TIMEOUT_S)})
        started = time.monotonic()
        with pytest.raises(StorageUnavailableError) as raised:
            async with asyncio.timeout(4 * BOUND_S):
                async with open_stores(config):
                    pass
        assert time.monotonic() - started < BOUND_S
        assert proxy.faulted["stall"] == 3  # three attempts in all, not botocore's 1 + 3
        assert "GetIndex" in str(raised.value)


async def test_a_state_read_from_a_stalled_s3_gives_up_within_the_client_timeouts(
    make_s3_environ: MakeS3Environ,
    moto_s3_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    environ = await make_s3_environ()
    async with TcpFaultProxy.running(moto_s3_url) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
        config = load_config({**environ, "STORAGE_TIMEOUT_S": str(STORAGE_TIMEOUT_S)})
        async with open_stores(config) as stores:
            proxy.mode = "stall"
            started = time.monotonic()
            with pytest.raises(StorageUnavailableError):
                async with asyncio.timeout(4 * BOUND_S):
                    await stores.objects.get("tenant/some-key")
            assert time.monotonic() - started < BOUND_S
            proxy.mode = "pass"
            assert await stores.objects.get("tenant/some-key") is None
