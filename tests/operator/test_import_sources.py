"""``mcp-memory import --from FORMAT`` as a real process on PostgreSQL with the local model: a
dry run writes nothing, the import is recalled by content, round-trips through our export into
a fresh store, and a second run writes nothing; refusals are one line, never a traceback.

The reference server's file is made by the real server over its own MCP tools; the others are
fixtures in their documented formats (tests/operator/source_files.py says why)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from shared.config import load_config
from shared.embedding import Embedder
from shared.operations.recall import recall
from shared.storage import open_stores
from tests.operator.source_files import (
    basic_memory_folder,
    doobidoo_export,
    mcp_memory_service_export,
    mem0_export,
    openmemory_zip,
    reference_graph,
)
from tests.operator.test_transfer import cli, embedder, memory_service

__all__ = ["embedder"]

TENANT = "acme"


async def _graph(tmp_path: Path) -> Path:
    return await reference_graph(tmp_path / "memory.jsonl")


async def _sync(make: Callable[[Path], Path], name: str, tmp_path: Path) -> Path:
    return make(tmp_path / name)


SOURCES: dict[str, tuple[str, Callable[[Path], Awaitable[Path]], str, str]] = {
    # id: (format, maker, query, the content recall must put first)
    "server-memory": (
        "server-memory",
        _graph,
        "which port does the billing API listen on",
        "Billing API: Listens on port 8443",
    ),
    "mcp-memory-service": (
        "mcp-memory-service",
        lambda p: mcp_memory_service_export(p / "export.json"),
        "where are the nightly backups copied",
        "Nightly backups are copied to the cold-storage bucket at 02:00.",
    ),
    "mcp-memory-service-fixture": (
        "mcp-memory-service",
        lambda p: _sync(doobidoo_export, "export.json", p),
        "where are the nightly backups copied",
        "Nightly backups are copied to the cold-storage bucket at 02:00.",
    ),
    "mem0": (
        "mem0",
        lambda p: _sync(mem0_export, "mem0.json", p),
        "does the user like dark mode",
        "User prefers dark mode in every editor",
    ),
    "openmemory": (
        "mem0",
        lambda p: _sync(openmemory_zip, "backup.zip", p),
        "when is the staging database refreshed",
        "The staging database is refreshed every Sunday night",
    ),
    "basic-memory": (
        "basic-memory",
        lambda p: _sync(basic_memory_folder, "notes", p),
        "what temperature for pour over coffee",
        "Coffee Brewing: Pour over brews at 92 degrees Celsius",
    ),
}


async def recalled(env: dict[str, str], embedder: Embedder, query: str) -> list[str]:
    config = load_config({**env, "EMBEDDING_PROVIDER": "local"})
    async with open_stores(config) as stores:
        ops = memory_service(stores, embedder, config)
        answer = await recall(ops, TENANT, None, query=query, mode="balanced", limit=5)
    assert answer.outcome is not None
    return [r.memory.content for r in answer.outcome.results]


def records(out: str) -> dict[str, Any]:
    return {r["id"]: r for r in map(json.loads, out.splitlines())}


def labels(record: dict[str, Any]) -> tuple[Any, ...]:
    """What a conversion decides, with the record format's defaults filled in."""
    return (
        record["content"],
        record["created_at"],
        record.get("type", "project"),
        record.get("category"),
        record.get("tags", []),
    )


@pytest.mark.parametrize("source", list(SOURCES))
async def test_an_import_from_each_source_is_recalled_and_round_trips_through_export(
    postgres_env: Any,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
) -> None:
    fmt, make, query, expected = SOURCES[source]
    path = await make(tmp_path)
    env, fresh = postgres_env(), postgres_env()
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    args = ["import", "--from", fmt, "--input", str(path), "--tenant", TENANT]
    # The dry run: the records it would take to stdout, the summary to stderr, nothing written.
    code, out, err = await cli(*args, "--dry-run", env=env)
    assert code == 0, err
    planned = records(out)
    assert f"dry run: {len(planned)} memories would be taken" in err, err
    assert expected in {r["content"] for r in planned.values()}
    code, _, err = await cli("export", "--tenant", TENANT, env=env)
    assert code == 1 and "unknown tenant 'acme'" in err, err

    code, _, err = await cli(*args, env=env)
    assert code == 0, err
    assert f"{len(planned)} memories written, 0 already there" in err, err
    assert (await recalled(env, embedder, query))[0] == expected

    # Our export carries what the conversion planned, dates and labels alike; it imports into
    # a fresh store, where recall gives the same first answer.
    code, out, err = await cli("export", "--tenant", TENANT, env=env)
    assert code == 0, err
    exported = records(out)
    assert {i: labels(r) for i, r in exported.items()} == {i: labels(r) for i, r in planned.items()}
    dump = tmp_path / "ours.jsonl"
    dump.write_text(out)
    code, _, err = await cli("import", "--input", str(dump), env=fresh)
    assert code == 0, err
    for key, value in fresh.items():
        monkeypatch.setenv(key, value)
    assert (await recalled(fresh, embedder, query))[0] == expected

    # A second run of the same source writes nothing.
    code, _, err = await cli(*args, env=env)
    assert code == 0 and f"0 memories written, {len(planned)} already there" in err, err


async def test_an_over_limit_observation_is_refused_by_its_place_and_nothing_is_written(
    postgres_env: Any, tmp_path: Path
) -> None:
    env = postgres_env()
    path = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": "Notes", "entityType": "topic"}
    lines = [{**entity, "observations": ["fine"]}, {**entity, "observations": ["x" * 40_000]}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ["import", "--from", "server-memory", "--input", str(path), "--tenant", TENANT]
    for extra in ([], ["--dry-run"]):
        code, out, err = await cli(*args, *extra, env=env)
        assert code == 1 and out == "", err
        assert (
            "import refused: memory.jsonl line 2 observation 1: `content` may be at most "
            "32000 bytes; nothing was written"
        ) in err
        assert "Traceback" not in err
    code, _, err = await cli("export", "--tenant", TENANT, env=env)
    assert code == 1 and "unknown tenant 'acme'" in err, err


async def test_from_refuses_missing_flags_and_the_wrong_kind_of_input(tmp_path: Path) -> None:
    notes = basic_memory_folder(tmp_path / "notes")
    cases = [
        (["--from", "mem0", "--input", str(notes / "empty.md")], "needs --input (the export)"),
        (
            ["--from", "basic-memory", "--input", str(notes / "empty.md"), "--tenant", TENANT],
            "--input " + str(notes / "empty.md") + ": not a folder",
        ),
        (["--from", "mem0", "--input", str(notes), "--tenant", TENANT], "is a directory"),
        (["--dry-run"], "--dry-run goes with --from FORMAT"),
        (["--from", "letta"], "invalid choice: 'letta'"),
    ]
    for args, expected in cases:
        code, _, err = await cli("import", *args, env={}, stdin=b"")
        assert code != 0 and expected in err, err
        assert "Traceback" not in err
