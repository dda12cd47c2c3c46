"""The README and the docs against the code they describe. The README is a user's page: it leads
with the two commands (the server, then the whole suite, which .ci/run runs) and stays short. The
full flag lists (README + docs/configuration.md + docs/operations.md), the benchmark stages
(docs/development.md) and the crash-safe write orders (docs/internals.md) are the code's own, so
none can drift again; and no page speaks in the maintainers' working words or paths."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from bench.__main__ import STAGES
from services.api.main import _parser as api_parser
from services.compactor.main import _parser as compactor_parser
from services.operator.main import _parser as operator_parser
from shared.memories import DELETE_ORDER, WRITE_ORDER

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
# Where the README's operator material moved: every setting and flag, the operator commands.
FLAG_PAGES = (README, (DOCS / "configuration.md").read_text(), (DOCS / "operations.md").read_text())
README_MAX_LINES = 250


def sh_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.DOTALL)


def long_flags(parser: argparse.ArgumentParser) -> set[str]:
    """Every ``--flag`` of ``parser`` and of its subcommands."""
    flags: set[str] = set()
    for action in parser._actions:
        flags |= {option for option in action.option_strings if option.startswith("--")}
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags |= long_flags(sub)
    return flags - {"--help"}


def test_the_readme_leads_with_the_server_then_the_suite_and_ci_runs_that_suite() -> None:
    first, second = sh_blocks()[:2]
    assert first.strip().endswith("&& mcp-memory-api --local"), first
    test_command = second.strip().rsplit("&& ", 1)[-1]
    assert test_command == "python -m pytest", second
    # The README's prose before them is the introduction alone: no other command comes first.
    assert README.index("```sh") > 0 and "```" not in README[: README.index("```sh")]
    ci = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert ci[-1] == test_command, "the last thing .ci/run does is the README's test command"


def test_the_readme_and_the_operator_pages_name_every_flag_of_every_command() -> None:
    missing = [
        f"{parser.prog} {flag}"
        for parser in (api_parser(), compactor_parser(), operator_parser())
        for flag in sorted(long_flags(parser))
        if not any(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", page) for page in FLAG_PAGES)
    ]
    assert missing == [], f"neither the README nor docs/ mention: {', '.join(missing)}"


def test_the_configuration_page_tables_every_flag_of_the_servers() -> None:
    """The flags table of docs/configuration.md, row by row, against each server's parser."""
    page = (DOCS / "configuration.md").read_text()
    for parser in (api_parser(), compactor_parser()):
        (row,) = [line for line in page.splitlines() if line.startswith(f"| `{parser.prog}` |")]
        assert sorted(set(re.findall(r"--[a-z][\w-]*", row))) == sorted(long_flags(parser)), row


def test_the_development_page_lists_every_benchmark_stage() -> None:
    (listed,) = re.findall(r"\(stages: ([a-z,\s]+)\)", (DOCS / "development.md").read_text())
    assert tuple(shlex.split(listed.replace(",", " "))) == STAGES


def test_the_internals_page_states_the_write_and_delete_orders_the_code_follows() -> None:
    prose = " ".join((DOCS / "internals.md").read_text().split())
    assert "`remember` writes: " + ", then ".join(WRITE_ORDER) in prose
    assert "`forget` deletes: " + ", then ".join(DELETE_ORDER) in prose


def test_the_readme_is_a_short_page_for_users() -> None:
    lines = README.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    # What a user reads it for, in this order: run it, connect a client, the tools, settings.
    headings = re.findall(r"^## (.+)$", README, flags=re.MULTILINE)
    order = ["Connect a client", "Tools", "Configuration"]
    assert [h for h in headings if h in order] == order, headings
    # Each client example sets the tenant: the HTTP ones by header, the stdio ones by variable.
    assert "```python" in README and "X-Memory-Tenant" in README.split("```python")[1]
    (curl,) = [
        line for block in sh_blocks() for line in block.splitlines() if line.startswith("curl ")
    ]
    assert "-H 'X-Memory-Tenant: my-project'" in curl
    for value in ("project", "pattern", "reference", "conversation", "precision", "balanced"):
        assert f"`{value}`" in README, value


def test_every_docs_link_of_the_readme_and_the_docs_resolves() -> None:
    pages = {ROOT / "README.md": README, **{path: path.read_text() for path in DOCS.glob("*.md")}}
    broken = [
        f"{path.relative_to(ROOT)} -> {target}"
        for path, text in pages.items()
        for target in re.findall(r"\]\(([^)#:]+\.(?:md|png))(?:#[^)]*)?\)", text)
        if not (path.parent / target).exists()
    ]
    assert broken == [], broken


# The maintainers' working words: where their runs were kept and what their work units were
# called. A reader of these pages has neither, so none may appear.
MAINTAINER_WORDS = re.compile(
    r"/work/|/tmp/|bench/results/session|\bsessions? \d|\bsession\d|\bissues? \d+\b|"
    r"\bissue's\b|\(issue|issue \d+'s",
    flags=re.IGNORECASE,
)


def test_no_page_speaks_in_maintainer_paths_or_session_words() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}"
        for path in pages
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        for match in MAINTAINER_WORDS.finditer(line)
    ]
    assert found == [], "\n".join(found)


def test_the_maintainer_words_check_can_fail() -> None:
    for text in (
        "--out /tmp/exp/speed5",
        "session 16",
        "**Session 15, write-time context**",
        "(issue 27)",
        "Issue 28's excerpts",
        "/work/shared/bench-data",
    ):
        assert MAINTAINER_WORDS.search(text), text
    assert not MAINTAINER_WORDS.search("a signed session for at most 12 hours")
