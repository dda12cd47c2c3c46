"""Helpers for the deployment checks: finding the offline tools, rendering kustomizations, and
reading what the code and the Dockerfiles declare, so the tests compare artefacts with sources.

Rendering uses the real kustomize — the standalone ``kustomize`` binary when there is one, else the
copy built into ``kubectl`` (``kubectl kustomize``, kustomize v5), which the machine image ships.
No Python re-implementation: a renderer of our own could agree with our manifests and still
disagree with what ``kubectl apply -k`` does.

A missing tool skips on a developer's machine and fails under ``CI=true``, so CI cannot go green
by not checking.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = ("s3", "postgres")
DOCKERFILES = {"api": ROOT / "Dockerfile.api", "compactor": ROOT / "Dockerfile.compactor"}

Doc = dict[str, Any]


def require_tool(name: str) -> str:
    """The path of an executable, looked up on PATH and beside the running interpreter."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found:
        return found
    message = f"{name} is not installed (see tests/deploy/render.py; .ci/run installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def kustomize_command() -> list[str]:
    standalone = shutil.which("kustomize")
    if standalone:
        return [standalone, "build"]
    return [require_tool("kubectl"), "kustomize"]


def kustomize_build(directory: Path) -> list[Doc]:
    """Every document ``kubectl apply -k directory`` would send, parsed."""
    result = subprocess.run(
        [*kustomize_command(), str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"kustomize build {directory} failed:\n{result.stderr}"
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert docs, f"kustomize build {directory} rendered nothing"
    return docs


def find(docs: list[Doc], kind: str, name: str | None = None) -> list[Doc]:
    return [
        doc
        for doc in docs
        if doc["kind"] == kind and (name is None or doc["metadata"]["name"] == name)
    ]


def one(docs: list[Doc], kind: str, name: str) -> Doc:
    found = find(docs, kind, name)
    assert len(found) == 1, f"expected exactly one {kind}/{name}, found {len(found)}"
    return found[0]


def containers(deployment: Doc) -> list[Doc]:
    return list(deployment["spec"]["template"]["spec"]["containers"])


def container_port(container: Doc, port: int | str) -> int:
    """Resolve a probe's or Service's port (a number or a container port's name)."""
    if isinstance(port, int):
        return port
    for declared in container.get("ports", []):
        if declared.get("name") == port:
            return int(declared["containerPort"])
    raise AssertionError(f"container {container['name']} has no port named {port!r}")


def config_env_names() -> set[str]:
    """Every environment variable shared/config.py reads (it is the only reader in the project)."""
    source = (ROOT / "shared" / "config.py").read_text(encoding="utf-8")
    names = set(re.findall(r"""env\.(?:text|read|given)\(\s*["']([A-Z][A-Z0-9_]*)["']""", source))
    # Guard against the pattern silently matching nothing after a refactor of config.py.
    assert {"PORT", "DATABASE_URL", "METRICS_PORT", "VECTOR_BUCKET"} <= names, names
    return names


def project_metadata() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project: dict[str, Any] = tomllib.load(handle)["project"]
    return project


# ---- Dockerfiles ----


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, rest = line.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
    assert not pending, f"{path.name} ends inside a continued line"
    return instructions


def final_stage(instructions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM"]
    assert starts, "no FROM"
    return instructions[starts[-1] :]


# ---- .dockerignore ----


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker's matcher (moby/patternmatcher): Go filepath.Match plus ``**`` for any depth."""
    out = ""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                i += 1
                out += "(?:.*/)?"
            else:
                out += ".*"
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.index("]", i)
            out += "[" + pattern[i + 1 : end].replace("!", "^", 1) + "]"
            i = end
        else:
            out += re.escape(char)
        i += 1
    return re.compile(out + r"\Z")


def dockerignore_rules(path: Path) -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        rules.append((negated, _pattern_regex(pattern)))
    return rules


def is_ignored(relative: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether the build context leaves ``relative`` out: the last rule matching the path, or
    one of its parent directories, decides (a directory left out takes its contents with it)."""
    parts = relative.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    ignored = False
    for negated, regex in rules:
        if any(regex.match(candidate) for candidate in candidates):
            ignored = not negated
    return ignored


def build_context(rules: list[tuple[bool, re.Pattern[str]]]) -> Iterator[Path]:
    """The files `docker build -f Dockerfile.x .` would send, relative to the repository root."""
    for directory, subdirectories, files in os.walk(ROOT):
        relative_dir = Path(directory).relative_to(ROOT)
        subdirectories[:] = [
            name for name in subdirectories if name not in {".git", ".venv"}
        ]  # large and always ignored; walking them would only cost time
        for name in files:
            relative = (relative_dir / name).as_posix()
            if not is_ignored(relative, rules):
                yield relative_dir / name
