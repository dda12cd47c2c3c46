"""S3 outages as the API lives them (issue 29): the real runtime on S3, with moto and the S3
Vectors fake each behind a TcpFaultProxy that can reset every connection or accept and never
answer, and the official MCP client over real HTTP.

- ``/ready`` covers both stores: 503 while either resets or stalls, 200 again after.
- A stalled store costs a tool call its storage deadline (``STORAGE_TIMEOUT_S``, small here), not
  the 35 s the call used to hang, and the miss is counted on ``/metrics``.
- What the model reads names the store and what to do, never an endpoint, a bucket, a key or the
  tenant; the ``tool_failed`` log line keeps that detail for the operator.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx2
import mcp_types as types
import msgspec
import pytest
from aiohttp import web

from services.api.http.app import build_app
from services.api.runtime import open_runtime
from services.api.storage_probe import READY_TIMEOUT_S
from shared.config import load_config
from shared.process.logs import JsonLineFormatter
from tests.api.conftest import mcp_session
from tests.fakes.aws import create_s3_backend, point_aws_at
from tests.fakes.tcp_faults import Mode, TcpFaultProxy

# A storage deadline just above what botocore's retries of a reset connection take (three
# attempts, backing off at most 1 s then 2 s), so a reset is "could not be reached", with the
# endpoint's detail in the log, and only a stall is a timeout.
STORAGE_TIMEOUT_S = 4.0
TOOL_TIMEOUT_S = 8.0
# Far under the 35 s a stalled call used to take, with room for a loaded 2-core machine.
PROMPT_S = STORAGE_TIMEOUT_S + 3


class Outage(msgspec.Struct, frozen=True, kw_only=True):
    base: str
    s3: TcpFaultProxy
    vectors: TcpFaultProxy
    vector_bucket: str
    state_bucket: str
    s3_url: str
    vectors_url: str


@pytest.fixture(scope="module")
async def outage(moto_s3_url: str, s3vectors_server: tuple[object, str]) -> AsyncIterator[Outage]:
    """One API on S3 for the module, its two endpoints each behind a fault proxy."""
    vectors_url = s3vectors_server[1]
    async with (
        TcpFaultProxy.running(moto_s3_url) as s3,
        TcpFaultProxy.running(vectors_url) as vectors,
    ):
        with pytest.MonkeyPatch.context() as monkeypatch:
            point_aws_at(monkeypatch, s3_url=s3.url, s3vectors_url=vectors.url)
            suffix = uuid.uuid4().hex[:8]
            vector_bucket, state_bucket = f"outage-vectors-{suffix}", f"outage-state-{suffix}"
            await create_s3_backend(
                s3_url=moto_s3_url,
                s3vectors_url=vectors_url,
                vector_bucket=vector_bucket,
                state_bucket=state_bucket,
                dimension=384,
            )
            config = load_config(
                {
                    "VECTOR_BUCKET": vector_bucket,
                    "STATE_BUCKET": state_bucket,
                    "AWS_REGION": "us-east-1",
                    "EMBEDDING_PROVIDER": "local",
                    "STORAGE_TIMEOUT_S": str(STORAGE_TIMEOUT_S),
                    "TOOL_TIMEOUT_S": str(TOOL_TIMEOUT_S),
                }
            )
            runner = web.AppRunner(build_app(config, open_runtime=open_runtime), shutdown_timeout=5)
            await runner.setup()
            try:
                site = web.TCPSite(runner, "127.0.0.1", 0)
                await site.start()
                yield Outage(
                    base=f"http://127.0.0.1:{runner.addresses[0][1]}",
                    s3=s3,
                    vectors=vectors,
                    vector_bucket=vector_bucket,
                    state_bucket=state_bucket,
                    s3_url=moto_s3_url,
                    vectors_url=vectors_url,
                )
            finally:
                s3.mode = vectors.mode = "pass"
                await runner.cleanup()


@pytest.fixture(autouse=True)
def _outage_ends(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "outage" in request.fixturenames:
        proxies: Outage = request.getfixturevalue("outage")
        proxies.s3.mode = proxies.vectors.mode = "pass"


def tenant_of(request: pytest.FixtureRequest) -> str:
    return f"t-{hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]}"


async def call(
    outage: Outage, tenant: str, tool: str, arguments: dict[str, object]
) -> tuple[types.CallToolResult, float]:
    """The tool's result and how long it took; a call still hanging after twice the promised
    bound fails the test rather than waiting out the client's own timeout."""
    started = time.monotonic()
    async with asyncio.timeout(2 * PROMPT_S):
        async with mcp_session(f"{outage.base}/mcp", headers={"X-Memory-Tenant": tenant}) as c:
            result = await c.call_tool(tool, arguments)
    return result, time.monotonic() - started


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def sample(outage: Outage, name: str) -> float:
    async with httpx2.AsyncClient() as http:
        text = (await http.get(f"{outage.base}/metrics")).text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def ready(outage: Outage) -> tuple[int, dict[str, str], float]:
    started = time.monotonic()
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.get(f"{outage.base}/ready")
    return response.status_code, response.json(), time.monotonic() - started


def assert_names_no_infrastructure(text: str, outage: Outage, tenant: str) -> None:
    for leak in (
        "127.0.0.1",
        "http://",
        "s3://",
        "s3vectors://",
        outage.vector_bucket,
        outage.state_bucket,
        tenant,
        "#",  # a vector key is <tenant>#<id>
        "endpoint",
    ):
        assert leak not in text, f"{leak!r} in {text!r}"


@pytest.mark.parametrize("fault", ["reset", "stall"])
async def test_ready_follows_s3_vectors_and_recovers(outage: Outage, fault: Mode) -> None:
    assert (await ready(outage))[:2] == (200, {"status": "ready"})

    outage.vectors.mode = fault
    status, body, elapsed = await ready(outage)
    assert status == 503, body
    assert elapsed < READY_TIMEOUT_S + 1
    assert body["status"] == "unavailable"
    assert "S3 Vectors" in body["reason"], body
    assert "127.0.0.1" not in body["reason"] and outage.vector_bucket not in body["reason"]
    async with httpx2.AsyncClient() as http:
        assert (await http.get(f"{outage.base}/health")).status_code == 200

    outage.vectors.mode = "pass"
    assert (await ready(outage))[:2] == (200, {"status": "ready"})


async def test_ready_follows_the_state_bucket(outage: Outage) -> None:
    outage.s3.mode = "reset"
    status, body, _ = await ready(outage)
    assert status == 503 and "S3" in body["reason"] and "S3 Vectors" not in body["reason"], body
    outage.s3.mode = "pass"
    assert (await ready(outage))[0] == 200


@pytest.mark.parametrize(
    ("tool", "arguments", "stage"),
    [
        ("recall", {"query": "Which port does the API listen on?"}, "vector_query"),
        ("remember", {"content": "The API listens on port 3000 in the cluster."}, "vector_query"),
    ],
)
async def test_a_stalled_s3_vectors_is_a_prompt_clear_tool_error_and_counted(
    outage: Outage,
    request: pytest.FixtureRequest,
    tool: str,
    arguments: dict[str, object],
    stage: str,
) -> None:
    tenant = tenant_of(request)
    metric = f'mcp_memory_tool_timeouts_total{{stage="{stage}",tool="{tool}"}}'
    before = await sample(outage, metric)
    stalled = outage.vectors.faulted["stall"]

    outage.vectors.mode = "stall"
    result, elapsed = await call(outage, tenant, tool, arguments)

    text = text_of(result)
    assert result.is_error, text
    assert elapsed < PROMPT_S, elapsed
    assert outage.vectors.faulted["stall"] > stalled  # the fault was met, not bypassed
    assert f"S3 Vectors did not answer within {STORAGE_TIMEOUT_S:g} s" in text, text
    assert "try again" in text, text
    assert_names_no_infrastructure(text, outage, tenant)
    assert await sample(outage, metric) == before + 1

    outage.vectors.mode = "pass"
    recovered, _ = await call(outage, tenant, tool, arguments)
    assert not recovered.is_error, text_of(recovered)


@pytest.mark.parametrize(
    ("proxy", "tool", "arguments", "store"),
    [
        ("vectors", "recall", {"query": "Which port does the API listen on?"}, "S3 Vectors"),
        ("vectors", "remember", {"content": "The API listens on port 3000."}, "S3 Vectors"),
        ("s3", "list_memories", {}, "S3"),
        ("s3", "memory_stats", {}, "S3"),
    ],
)
async def test_an_outage_error_names_the_store_and_the_log_keeps_the_detail(
    outage: Outage,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
    proxy: str,
    tool: str,
    arguments: dict[str, object],
    store: str,
) -> None:
    tenant = tenant_of(request)
    broken: TcpFaultProxy = getattr(outage, proxy)
    resets = broken.faulted["reset"]
    broken.mode = "reset"
    with caplog.at_level(logging.INFO):
        result, elapsed = await call(outage, tenant, tool, arguments)

    text = text_of(result)
    assert result.is_error, text
    assert elapsed < PROMPT_S, elapsed
    assert broken.faulted["reset"] > resets
    assert text.startswith("Error: the memory store could not complete this request — "), text
    assert f"{store} could not be reached" in text, text
    assert "try again" in text, text
    assert_names_no_infrastructure(text, outage, tenant)

    formatter = JsonLineFormatter()
    failed = [
        json.loads(formatter.format(record))
        for record in caplog.records
        if record.getMessage() == "tool_failed"
    ]
    assert len(failed) == 1, failed
    (line,) = failed
    assert (line["tool"], line["tenant"]) == (tool, tenant)
    bucket = outage.vector_bucket if proxy == "vectors" else outage.state_bucket
    # The operator's line says where: the bucket and the endpoint that failed.
    assert bucket in line["message"] and broken.url in line["message"], line
