"""open_embedder loads only the chosen provider's libraries."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import asyncio, json, sys
    from shared.config import load_config
    from shared.embedding import open_embedder

    async def main() -> None:
        env = json.loads(sys.argv[1])
        async with open_embedder(load_config(env)) as embedder:
            kind = type(embedder).__name__
        loaded = [m for m in ("aiobotocore", "botocore", "onnxruntime", "tokenizers")
                  if m in sys.modules]
        print(json.dumps({"kind": kind, "loaded": loaded}))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize(
    ("env", "kind", "loaded"),
    [
        (
            {
                "EMBEDDING_PROVIDER": "openai",
                "EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1",
                "EMBEDDING_API_KEY": "k",
            },
            "OpenAIEmbedder",
            [],
        ),
        ({}, "BedrockEmbedder", ["aiobotocore", "botocore"]),
    ],
)
def test_only_the_chosen_provider_is_imported(
    env: dict[str, str], kind: str, loaded: list[str]
) -> None:
    import json

    full_env = {"DATABASE_URL": "postgres://memory@db/memory", "AWS_REGION": "us-east-1", **env}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(full_env)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        # Dummy keys and no instance metadata: creating a client must not go looking for creds.
        env={
            **os.environ,
            "AWS_ACCESS_KEY_ID": "AKIAFAKEFORTESTS0000",
            "AWS_SECRET_ACCESS_KEY": "fake",
            "AWS_EC2_METADATA_DISABLED": "true",
        },
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"kind": kind, "loaded": loaded}
