"""The README against the code it describes: it leads with the two commands (the server, then
the whole suite, which .ci/run runs), and its lists of flags and benchmark stages are the code's
own, so neither can drift again."""

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


def test_the_readme_names_every_flag_of_every_command() -> None:
    missing = [
        f"{parser.prog} {flag}"
        for parser in (api_parser(), compactor_parser(), operator_parser())
        for flag in sorted(long_flags(parser))
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", README)
    ]
    assert missing == [], f"the README does not mention: {', '.join(missing)}"


def test_the_readme_lists_every_benchmark_stage() -> None:
    (listed,) = re.findall(r"\(stages: ([a-z,\s]+)\)", README)
    assert tuple(shlex.split(listed.replace(",", " "))) == STAGES


def test_the_readme_states_the_write_and_delete_orders_the_code_follows() -> None:
    prose = " ".join(README.split())
    assert "`remember` writes: " + ", then ".join(WRITE_ORDER) in prose
    assert "`forget` deletes: " + ", then ".join(DELETE_ORDER) in prose
