"""Adding a plain field to a memory touches three places: the declaration (``Draft``), the
remember tool's argument, and the page's template (docs/architecture.md, "Adding a field").

The test does it: it copies the code, adds ``source`` to the declaration and to remember's
arguments (the template only shows it, so it is left out), and checks in that copy that the
codec stores and reads it back, the export line carries it and an import reads and limits it,
the structured output and the prose show it, the tool passes it on, and a page correction
keeps it. No other file is edited.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The two code edits, each an insertion before a line that is in its file once.
DECLARATION = (
    "shared/model/draft.py",
    '    scope: Scope = "project"\n',
    "    source: Annotated[str, limited(max_utf8_bytes=256)] | None = None\n",
)
TOOL_ARGUMENT = (
    "services/api/tools/remember.py",
    "    scope: Annotated[\n        ScopeChoice,",
    "    source: Maybe[Annotated[str, about('Where the fact comes from.', max_utf8_bytes=256)]]"
    " = UNSET\n",
)

CHECKS = """
import msgspec
from shared.errors import InvalidInputError
from shared.model import Memory, draft_values
from shared.storage.codec import check_budget, from_metadata, to_metadata
from shared.transfer.records import decode_line, encode_line, exported
from services.api.tools.render import render_memory
from services.api.tools.structured import ListedMemory
from services.api.tools.refusals import parse_arguments
from services.api.tools.remember import RememberArguments, drafted

memory = Memory(
    id="01JZ0000000000000000000000", tenant="acme", content="Deploys go through CI.",
    source="the runbook", created_at="2026-01-02T03:04:05.678Z",
)
metadata = to_metadata(memory)
check_budget(metadata)
assert metadata["source"] == "the runbook", metadata
assert from_metadata("acme#" + memory.id, metadata) == memory
bare = from_metadata("acme#" + memory.id, {"tenantId": "acme", "content": "old"})
assert bare is not None and bare.source is None

line = encode_line(exported(memory, replaced_by=(), counts=None))
assert '"source":"the runbook"' in line, line
assert decode_line(line).memory("acme") == memory
try:
    decode_line(line.replace("the runbook", "r" * 300))
except InvalidInputError as error:
    assert error.field == "source" and str(error) == "`source` may be at most 256 bytes", error
else:
    raise AssertionError("an over-long source was imported")

record = msgspec.to_builtins(ListedMemory.of(memory, preview="p"))
assert record["source"] == "the runbook", record
schema = msgspec.json.schema(ListedMemory)["$defs"]["ListedMemory"]
assert "source" in schema["required"], schema
assert "   source: the runbook" in render_memory(1, memory).splitlines(), render_memory(1, memory)

arguments = parse_arguments(RememberArguments, {"content": "c", "source": " the runbook "})
assert drafted(arguments).source == "the runbook"
assert drafted(parse_arguments(RememberArguments, {"content": "c"})).source is None
try:
    parse_arguments(RememberArguments, {"content": "c", "source": "r" * 300})
except InvalidInputError as error:
    assert error.field == "source", error
else:
    raise AssertionError("remember took an over-long source")

assert draft_values(memory)["source"] == "the runbook"  # what a page correction files again
print("carried")
"""


def _insert(root: Path, path: str, before: str, text: str) -> None:
    file = root / path
    source = file.read_text()
    assert source.count(before) == 1, f"{path}: the anchor is not there once"
    file.write_text(source.replace(before, text + before))


def test_a_new_plain_field_needs_only_its_declaration_and_its_tool_argument(
    tmp_path: Path,
) -> None:
    for package in ("shared", "services"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for path, before, text in (DECLARATION, TOOL_ARGUMENT):
        _insert(tmp_path, path, before, text)
    result = subprocess.run(
        [sys.executable, "-c", CHECKS],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.stdout.strip() == "carried", result.stdout + result.stderr
