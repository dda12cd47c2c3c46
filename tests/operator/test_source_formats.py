"""The source converters on their own: how each format maps onto our records, what each skips
and why, and the refusals that name the place, the field and the limit (no store involved)."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from services.operator.main import _parser as operator_parser
from shared.transfer.sources import FORMATS, Conversion, SourceError
from shared.transfer.sources.frontmatter import split
from shared.transfer.sources.running import check, summary
from tests.operator.source_files import (
    basic_memory_folder,
    doobidoo_export,
    mem0_export,
    openmemory_zip,
)

TENANT = "acme"


def convert(name: str, path: Path) -> Conversion:
    return FORMATS[name](path, TENANT)


def graph(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


ENTITY = {"type": "entity", "name": "Billing API", "entityType": "service", "observations": []}


def test_server_memory_observations_and_relations_become_memories(tmp_path: Path) -> None:
    path = graph(
        tmp_path,
        {**ENTITY, "observations": ["Listens on port 8443", "  "]},
        {"type": "entity", "name": "Acme", "entityType": "company", "observations": []},
        {"type": "relation", "from": "Billing API", "to": "Acme", "relationType": "belongs_to"},
    )
    os.utime(path, (1_717_000_000, 1_717_000_000.25))
    conversion = convert("server-memory", path)
    records = [t.record for t in conversion.taken]
    assert [(r.content, r.category, list(r.tags), r.memory_type) for r in records] == [
        ("Billing API: Listens on port 8443", "service", ["Billing API"], "project"),
        ("Billing API belongs to Acme", "relation", ["Billing API", "Acme"], "project"),
    ]
    assert [(s.origin, s.reason) for s in conversion.skipped] == [
        ("memory.jsonl line 1 observation 2", "an empty observation"),
        ("memory.jsonl line 2", "entity 'Acme' has no observations"),
    ]
    # Dated by the file (it keeps no dates); the same file converts to the same ids.
    assert {r.created_at for r in records} == {"2024-05-29T16:26:40.250Z"}
    assert [t.record.id for t in convert("server-memory", path).taken] == [r.id for r in records]
    assert summary(conversion)[0] == "2 taken, 2 skipped"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "memory.jsonl line 2: not a JSON object"),
        ({"type": "entity", "name": "X"}, "line 2: missing the required field `entityType`"),
        ({"type": "relation", "from": "A", "to": "B"}, "field `relationType`"),
        ({"type": "node", "name": "X"}, 'line 2: `type` must be "entity" or "relation"'),
        ({**ENTITY, "observations": "one"}, "`observations` must be a list of strings"),
        ({**ENTITY, "name": 7}, "line 2: `name` must be a string, not int"),
    ],
)
def test_a_malformed_graph_line_is_refused_by_number_and_field(
    tmp_path: Path, line: object, expected: str
) -> None:
    path = graph(tmp_path, {**ENTITY, "observations": ["fine"]}, line)
    with pytest.raises(SourceError) as caught:
        convert("server-memory", path)
    assert expected in str(caught.value)


def test_the_imports_limits_are_named_with_the_sources_place(tmp_path: Path) -> None:
    """Each converted record is screened as an import line is; a refusal names where it came
    from in the source, the field and the limit."""
    cases = [
        (
            {**ENTITY, "observations": ["x" * 32_001]},
            "line 2 observation 1: `content` may be at most 32000 bytes",
        ),
        ({**ENTITY, "entityType": "t" * 129, "observations": ["ok"]}, "`category` may be at most"),
        ({**ENTITY, "observations": ["a\x00b"]}, "`content` contains a NUL character"),
    ]
    for line, expected in cases:
        path = graph(tmp_path, {**ENTITY, "observations": ["fine"]}, line)
        with pytest.raises(SourceError) as caught:
            check(convert("server-memory", path))
        assert expected in str(caught.value) and "memory.jsonl line 2" in str(caught.value)


def test_mcp_memory_service_keeps_dates_types_tags_and_stores(tmp_path: Path) -> None:
    conversion = convert("mcp-memory-service", doobidoo_export(tmp_path / "export.json"))
    first, second = (t.record for t in conversion.taken)
    assert (first.created_at, first.memory_type, first.category) == (
        "2024-01-01T00:00:00.000Z",
        "project",
        "observation",
    )
    assert list(first.tags) == ["ops", "backups"]
    assert (second.created_at, second.memory_type, list(second.tags)) == (
        "2024-03-01T00:00:00.500Z",
        "pattern",
        ["process", "store:work"],
    )
    assert [s.reason for s in conversion.skipped] == ["the same as export.json memories[0]"]


def test_mcp_memory_service_refusals_name_the_memory_and_field(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"memories": [{"content": "x", "created_at": "soon"}]}))
    with pytest.raises(SourceError, match=r"memories\[0\]: `created_at` 'soon' is not an ISO"):
        convert("mcp-memory-service", path)
    path.write_text(json.dumps({"memories": [{"tags": []}]}))
    with pytest.raises(SourceError, match=r"memories\[0\]: missing the required field `content`"):
        convert("mcp-memory-service", path)
    path.write_text(json.dumps({"export_metadata": {}}))
    with pytest.raises(SourceError, match="has a `memories` list"):
        convert("mcp-memory-service", path)
    many = {"content": "x", "created_at": 1.0, "tags": [f"t{n}" for n in range(21)]}
    path.write_text(json.dumps({"memories": [many]}))
    with pytest.raises(SourceError, match=r"memories\[0\]: `tags` may hold at most 20"):
        check(convert("mcp-memory-service", path))


def test_mem0_and_openmemory_map_categories_agents_and_states(tmp_path: Path) -> None:
    first, second = (t.record for t in convert("mem0", mem0_export(tmp_path / "m.json")).taken)
    assert (first.created_at, first.category, list(first.tags)) == (
        "2024-02-03T12:05:06.789Z",
        "preferences",
        ["preferences", "tools", "agent:coder"],
    )
    assert (second.category, list(second.tags)) == (None, [])
    conversion = convert("mem0", openmemory_zip(tmp_path / "backup.zip"))
    (only,) = (t.record for t in conversion.taken)
    assert (only.content, only.category, only.created_at) == (
        "The staging database is refreshed every Sunday night",
        "work",
        "2024-05-06T07:08:09.000Z",
    )
    assert [s.reason for s in conversion.skipped] == ["its state is 'deleted': OpenMemory hides it"]


def test_mem0_refusals_name_the_memory_and_field(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"results": [{"memory": "ok"}, {"id": "2"}]}))
    with pytest.raises(SourceError, match=r"m.json memory 2: missing the required field `memory`"):
        convert("mem0", path)
    path.write_text(json.dumps({"total": 3}))
    with pytest.raises(SourceError, match="a mem0 export is a list, or an object with"):
        convert("mem0", path)
    path.write_text("[{")
    with pytest.raises(SourceError, match=r"m\.json: not a JSON document"):
        convert("mem0", path)


def test_basic_memory_notes_become_observations_relations_and_text(tmp_path: Path) -> None:
    conversion = convert("basic-memory", basic_memory_folder(tmp_path / "notes"))
    records = {t.origin: t.record for t in conversion.taken}
    method = records["coffee/coffee-brewing.md body line 7"]
    assert (method.content, method.category, list(method.tags)) == (
        "Coffee Brewing: Pour over brews at 92 degrees Celsius",
        "method",
        ["temperature", "coffee"],
    )
    relation = records["coffee/coffee-brewing.md body line 11"]
    assert (relation.content, relation.category) == (
        "Coffee Brewing relates to Coffee Bean Origins",
        "relation",
    )
    text = records["coffee/coffee-brewing.md text"]
    assert (text.memory_type, text.category) == ("reference", "note")
    assert "gooseneck kettle" in text.content
    assert {r.created_at for r in records.values()} == {"2024-06-07T08:09:10.000Z"}
    assert sorted((s.origin, s.reason) for s in conversion.skipped) == [
        ("diagram.png", "not a Markdown (.md) file"),
        ("empty.md", "no observations, relations or text"),
    ]


def test_basic_memory_refuses_a_note_that_is_not_utf8_or_misdated(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"- [fact] caf\xe9\n")
    with pytest.raises(SourceError, match=r"bad\.md: not valid UTF-8"):
        convert("basic-memory", tmp_path)
    (tmp_path / "bad.md").write_text("---\ncreated: last week\n---\n- [fact] x\n")
    with pytest.raises(SourceError, match=r"bad\.md: `created` 'last week' is not an ISO-8601"):
        convert("basic-memory", tmp_path)


def test_basic_memory_skips_a_broken_link_and_refuses_a_note_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub.md").mkdir()  # a folder named like a note is walked, not read
    (tmp_path / "sub.md" / "inner.md").write_text("- [fact] x\n")
    (tmp_path / "broken.md").symlink_to(tmp_path / "missing.md")
    conversion = convert("basic-memory", tmp_path)
    assert [t.origin for t in conversion.taken] == ["sub.md/inner.md body line 1"]
    assert [(s.origin, s.reason) for s in conversion.skipped] == [
        ("broken.md", "not a regular file (a broken link?)")
    ]

    def denied(self: Path, *args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(SourceError, match=r"sub\.md/inner\.md: cannot be read: Permission denied"):
        convert("basic-memory", tmp_path)


def test_basic_memory_reads_tags_written_as_one_string(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("---\ntitle: N\ntags: ops, #db\n---\n- [fact] x #y\n")
    (taken,) = convert("basic-memory", tmp_path).taken
    assert (taken.record.content, list(taken.record.tags)) == ("N: x", ["y", "ops", "db"])


def test_front_matter_reads_scalars_and_both_list_forms() -> None:
    keys, body = split("---\ntitle: 'A: B'\ntags: [x, \"y\"]\nmore:\n- '#z'\n---\nbody\n")
    assert keys == {"title": "A: B", "tags": ["x", "y"], "more": ["#z"]}
    assert body == "body"
    assert split("no front matter") == ({}, "no front matter")


def test_every_import_from_command_in_the_docs_parses_and_names_a_format() -> None:
    """The commands of the README, docs/operations.md and docs/importing.md, as written, against
    the CLI's parser."""
    root = Path(__file__).resolve().parents[2]
    commands = [
        line.split("#", 1)[0].split(">", 1)[0]
        for doc in (
            root / "README.md",
            root / "docs" / "operations.md",
            root / "docs" / "importing.md",
        )
        for block in re.findall(r"```sh\n(.*?)```", doc.read_text(), flags=re.DOTALL)
        for line in block.splitlines()
        if "--from " in line and line.startswith("mcp-memory import")
    ]
    assert len(commands) >= 10
    named = set()
    for command in commands:
        args = operator_parser().parse_args(shlex.split(command)[1:])
        assert args.source in FORMATS and args.tenant and args.input, command
        named.add(args.source)
    assert named == set(FORMATS)


def test_basic_memory_relations_are_read_as_basic_memory_reads_them(tmp_path: Path) -> None:
    """A type of one word or quoted, an optional (context); prose around a link is text."""
    (tmp_path / "n.md").write_text(
        "---\ntitle: Api\n---\n"
        '- "depends on" [[Postgres]] (for sessions)\n'
        "- owned_by [[Team Core]]\n"
        "- see the [[Runbook]] before deploys\n"
        "- [decision] Use #postgres for sessions (since May)\n"
    )
    records = [t.record for t in convert("basic-memory", tmp_path).taken]
    assert [r.content for r in records] == [
        "Api depends on Postgres (for sessions)",
        "Api owned by Team Core",
        "Api: Use for sessions (since May)",
        "Api: - see the [[Runbook]] before deploys",
    ]
    assert list(records[2].tags) == ["postgres"]
