"""pytest fixtures for the fake embedding servers.

Use them from a conftest.py::

    from tests.fakes.fixtures import aws_test_credentials, bedrock_runtime, openai_embeddings

(or ``pytest_plugins = ["tests.fakes.fixtures"]`` in the root conftest). Each test gets its own
server on a fresh port, so knobs never leak between tests; starting one takes about a millisecond.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.bedrock_runtime import FakeBedrockRuntime, running_bedrock_runtime
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings, running_openai_embeddings


@pytest.fixture
def aws_test_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy keys through the standard chain (env), so botocore signs without finding real ones."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFORTESTS0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-for-tests")
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    # No shared files: a developer's ~/.aws must not leak into a test's credentials or region.
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
async def bedrock_runtime(aws_test_credentials: None) -> AsyncIterator[FakeBedrockRuntime]:
    """A fake bedrock-runtime; point AWS_ENDPOINT_URL (config.aws.endpoint_url) at .base_url."""
    async with running_bedrock_runtime() as fake:
        yield fake


@pytest.fixture
async def openai_embeddings() -> AsyncIterator[FakeOpenAIEmbeddings]:
    """A fake OpenAI-compatible service at 1536d: EMBEDDING_BASE_URL=.base_url, key .api_key."""
    async with running_openai_embeddings() as fake:
        yield fake
