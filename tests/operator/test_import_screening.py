"""``mcp-memory import`` refuses, by line number and before anything is written (issue 42, item
9): an id given twice for one tenant, a NUL character in a text field, and bytes that are not
UTF-8, from a file or from stdin. Real processes, on PostgreSQL and on S3 (moto and the S3
Vectors fake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.operator.test_import_links import nothing_stored
from tests.operator.test_transfer import (  # the fixtures are registered here by name
    TENANT,
    cli,
    many,
    postgres_env,  # noqa: F401
    s3_env,  # noqa: F401
    write_lines,
)


def refused(code: int, out: str, err: str, expected: str) -> None:
    assert code == 1 and out == "", err
    assert f"import refused: {expected}" in err and "nothing was written" in err, err
    assert "Traceback" not in err, err


async def test_an_id_given_twice_is_refused_with_both_lines_before_anything_is_written(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    # Line 70 repeats line 3's id with other content: past the first batch of 64.
    lines = many(80)
    lines[69] = {**lines[2], "content": "Generated rule 2 says something else entirely."}
    code, out, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=store_env
    )
    refused(code, out, err, f"line 70: `id` {lines[2]['id']} is already on line 3")
    assert await nothing_stored(store_env)
    # Another tenant's line may carry the same id: each tenant is its own set of ids.
    lines[69] = {**lines[2], "tenant": "other"}
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "ok.jsonl", lines)), env=store_env
    )
    assert code == 0 and "80 memories written" in err, err
    code, out, err = await cli("export", "--tenant", TENANT, env=store_env)
    assert code == 0 and len(out.splitlines()) == 79, err


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("content", "Port 80\u0000 is closed.", "`content` contains a NUL character (U+0000)"),
        ("tags", ["ops", "a\u0000b"], "`tags` contains a NUL character (U+0000)"),
        ("category", "de\u0000cision", "`category` contains a NUL character (U+0000)"),
    ],
)
async def test_a_nul_character_is_refused_by_name_before_anything_is_written(
    store_env: dict[str, str], tmp_path: Path, field: str, value: Any, expected: str
) -> None:
    lines = many(70)
    lines[67][field] = value
    code, out, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=store_env
    )
    refused(code, out, err, f"line 68: {expected}")
    assert await nothing_stored(store_env)


async def test_bytes_that_are_not_utf8_are_refused_by_line_from_a_file_and_from_stdin(
    postgres_env: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    env = postgres_env()
    body = bytearray("".join(json.dumps(line) + "\n" for line in many(70)).encode())
    lines = body.split(b"\n")
    lines[65] = lines[65].replace(b"Generated", b"Gen\xe9rated")  # Latin-1, line 66
    data = b"\n".join(lines)
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(data)
    column = lines[65].index(b"\xe9") + 1
    expected = f"line 66: not valid UTF-8 (byte 0xe9 at character {column})"
    code, out, err = await cli("import", "--input", str(path), env=env)
    refused(code, out, err, expected)
    code, out, err = await cli("import", env=env, stdin=data)
    refused(code, out, err, expected)
    assert await nothing_stored(env)
