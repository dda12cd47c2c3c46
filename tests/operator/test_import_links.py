"""``mcp-memory import`` refuses replacement links that would corrupt chains (issue 29): a line
naming its own id, a cycle among the lines or with records already stored, and a correction
seen in fewer places than what it corrects. Each refusal names the lines and comes before
anything is written. Real processes, on PostgreSQL and on S3 (moto and the S3 Vectors fake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.config import load_config
from shared.model.keys import replaced_key
from shared.storage import open_stores
from tests.operator.test_transfer import (  # the fixtures are registered here by name
    TENANT,
    cli,
    many,
    postgres_env,  # noqa: F401
    s3_env,  # noqa: F401
    write_lines,
)


async def nothing_stored(env: dict[str, str]) -> bool:
    code, _, err = await cli("export", "--tenant", TENANT, env=env)
    return code == 1 and f"unknown tenant '{TENANT}': it has no memories" in err


async def stored_ids(env: dict[str, str]) -> set[str]:
    code, out, err = await cli("export", "--tenant", TENANT, env=env)
    assert code == 0, err
    return {json.loads(line)["id"] for line in out.splitlines()}


async def test_a_line_naming_its_own_id_is_refused_before_anything_is_written(
    postgres_env: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    env = postgres_env()
    lines = many(3)
    lines[2]["replaced_by"] = [lines[2]["id"]]
    code, out, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=env
    )
    assert code == 1 and out == "", err
    assert "import refused: line 3: `replaced_by` names the line's own id" in err, err
    assert "nothing was written" in err
    assert await nothing_stored(env)


async def test_a_cycle_in_the_file_is_refused_by_its_lines_even_past_the_first_batch(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    # Lines 70 and 71, in the second batch of 64: the first batch is not written either.
    lines = many(80)
    y, z = lines[69], lines[70]
    y["replaced_by"], z["replaced_by"] = [z["id"]], [y["id"]]
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=store_env
    )
    assert code == 1, err
    assert "import refused: lines 70 and 71: `replaced_by` links form a cycle" in err, err
    assert f"{y['id']} → {z['id']} → {y['id']}" in err and "nothing was written" in err
    assert await nothing_stored(store_env)


async def test_a_cycle_with_records_already_stored_is_refused_and_the_store_is_unchanged(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    first = many(3)
    first[0]["replaced_by"] = [first[1]["id"]]  # 1 → 2, stored
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "a.jsonl", first)), env=store_env
    )
    assert code == 0, err
    # A later file says 2 → 3 and 3 → 1: with the stored 1 → 2, a cycle of three.
    second = [dict(first[1]), dict(first[2]), *many(5)[3:]]
    second[0]["replaced_by"] = [first[2]["id"]]
    second[1]["replaced_by"] = [first[0]["id"]]
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "b.jsonl", second)), env=store_env
    )
    assert code == 1, err
    assert "lines 1 and 2: `replaced_by` links form a cycle with replacement records" in err
    assert await stored_ids(store_env) == {line["id"] for line in first}
    # The same file without the link that closes it imports.
    del second[1]["replaced_by"]
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "c.jsonl", second)), env=store_env
    )
    assert code == 0 and "2 memories written, 2 already there" in err, err


async def test_a_note_replacing_a_project_memory_is_refused_as_remember_refuses_it(
    postgres_env: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    env = postgres_env()
    lines = many(4)
    note = {"scope": "conversation", "conversation": "thread-1", "type": "conversation"}
    other = {"scope": "conversation", "conversation": "thread-2", "type": "conversation"}
    lines[1] |= note
    lines[0]["replaced_by"] = [lines[1]["id"]]  # project → note of thread-1
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=env
    )
    assert code == 1, err
    assert "import refused: lines 1 and 2: `replaced_by` makes" in err and "seen more" in err
    assert await nothing_stored(env)
    # Another thread's note is refused too; a project memory replacing a note is fine.
    lines[2] |= other
    lines[0]["replaced_by"] = []
    lines[1]["replaced_by"] = [lines[2]["id"]]
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=env
    )
    assert code == 1 and "lines 2 and 3: `replaced_by` makes" in err, err
    lines[1]["replaced_by"] = [lines[3]["id"]]
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=env
    )
    assert code == 0 and "4 memories written" in err, err


async def test_stdin_is_read_twice_like_a_file(
    postgres_env: Any,  # noqa: F811
) -> None:
    env = postgres_env()
    lines = many(3)
    lines[0]["replaced_by"] = [lines[1]["id"]]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    code, _, err = await cli("import", env=env, stdin=body)
    assert code == 0 and "3 memories written" in err, err
    lines[1]["replaced_by"] = [lines[0]["id"]]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    code, _, err = await cli("import", env=env, stdin=body)
    # Line 1's link is stored already: only line 2's would be new, and it closes the cycle.
    assert code == 1, err
    assert "line 2: `replaced_by` links form a cycle with replacement records already" in err


async def test_a_store_holding_a_cycle_exports_a_file_that_imports(
    postgres_env: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    source, target = postgres_env(), postgres_env()
    lines = many(4)
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=source
    )
    assert code == 0, err
    y, z, x, w = (line["id"] for line in lines)
    # As an import that did not check its links stored them: Y → Z → Y, X → X; and Z → W.
    async with open_stores(load_config({**source, "EMBEDDING_PROVIDER": "local"})) as stores:
        for old, new in ((y, z), (z, y), (x, x), (z, w)):
            await stores.objects.put(replaced_key(TENANT, old, new), "", if_none_match=True)
    exported = tmp_path / "out.jsonl"
    code, _, err = await cli("export", "--tenant", TENANT, "--output", str(exported), env=source)
    assert code == 0, err
    # Void records are not written out; the record that leaves the cycle is.
    links = {
        record["id"]: record.get("replaced_by", [])
        for record in map(json.loads, exported.read_text().splitlines())
    }
    assert links == {y: [], z: [w], x: [], w: []}
    code, _, err = await cli("import", "--input", str(exported), env=target)
    assert code == 0 and "4 memories written" in err, err
