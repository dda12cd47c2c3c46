"""One version: pyproject.toml writes it, and every other mention is held equal to it here — the
changelog's newest entry, the README, the image tags in the manifests and docs, the images'
version label, each command's --version and the installed metadata the servers report (the
serverInfo itself is checked over HTTP in tests/api/test_mcp_transport.py and over stdio in
tests/test_tool_install.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from shared.process.version import installed_version
from tests.api._process import clean_env

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
RELEASE = re.compile(r"\d+\.\d+\.\d+")
SCRIPTS = ("mcp-memory-api", "mcp-memory-compactor", "mcp-memory")


def test_the_version_is_a_release_number() -> None:
    assert RELEASE.fullmatch(VERSION), VERSION


def test_the_changelog_opens_with_this_release() -> None:
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), flags=re.MULTILINE)
    assert headings and headings[0] == VERSION, headings[:2]


def test_the_readme_states_this_release() -> None:
    stated = re.findall(r"This is release (\S+) ", (ROOT / "README.md").read_text())
    assert stated == [VERSION]


def test_every_image_tag_is_this_release() -> None:
    documents = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "k8s").rglob("*.yaml")]
    tags = {
        (path.relative_to(ROOT).as_posix(), tag)
        for path in documents
        for tag in re.findall(r"mcp-memory-(?:api|compactor):([\w.-]+)", path.read_text())
    }
    assert tags and {tag for _, tag in tags} == {VERSION}, sorted(tags)
    kustomization = (ROOT / "k8s" / "base" / "kustomization.yaml").read_text()
    assert re.findall(r'newTag: "([^"]+)"', kustomization) == [VERSION, VERSION]


@pytest.mark.parametrize("dockerfile", ["Dockerfile.api", "Dockerfile.compactor"])
def test_the_image_is_labelled_with_this_release(dockerfile: str) -> None:
    text = (ROOT / dockerfile).read_text()
    assert re.findall(r'org\.opencontainers\.image\.version="([^"]+)"', text) == [VERSION]


def test_the_installed_package_is_this_release() -> None:
    """What the servers tell a client; a stale install (pyproject bumped, `pip install -e .` not
    run again) fails here rather than announcing the old version."""
    assert installed_version() == VERSION


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_command_reports_this_release(script: str) -> None:
    shown = subprocess.run(
        [str(Path(sys.executable).parent / script), "--version"],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == f"{script} {VERSION}\n"
