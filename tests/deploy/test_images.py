"""The two Dockerfiles and the build context: hadolint with zero findings, the properties the
platform asks of an image, and a real wheel built from exactly what .dockerignore lets through.

There is no Docker engine here, so the images are linted and their build step is reproduced, not
built.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from shared.config import load_config
from tests.deploy.render import (
    DOCKERFILES,
    ROOT,
    build_context,
    dockerfile_instructions,
    dockerignore_rules,
    final_stage,
    is_ignored,
    project_metadata,
    require_tool,
)

EXPECTED_UID = "10001"


def hadolint(path: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        [require_tool("hadolint"), "--no-color", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout.strip(), f"hadolint printed nothing: {result.stderr}"
    findings: list[dict[str, object]] = json.loads(result.stdout)
    return findings


@pytest.mark.parametrize("component", sorted(DOCKERFILES))
def test_hadolint_reports_nothing(component: str) -> None:
    findings = hadolint(DOCKERFILES[component])
    assert findings == [], "\n".join(
        f"{f['line']}: {f['code']} {f['level']}: {f['message']}" for f in findings
    )


def test_hadolint_does_report_a_bad_dockerfile(tmp_path: Path) -> None:
    """The lint above is only worth something if hadolint, run this way, can find anything."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install requests\nCMD python app.py\n", encoding="utf-8")
    codes = {finding["code"] for finding in hadolint(bad)}
    assert {"DL3006", "DL3013", "DL3025"} <= codes, codes


def test_no_hadolint_suppressions() -> None:
    for path in DOCKERFILES.values():
        assert "hadolint ignore" not in path.read_text(encoding="utf-8"), path.name
    assert not (ROOT / ".hadolint.yaml").exists() and not (ROOT / ".hadolint.yml").exists()


@pytest.mark.parametrize("component", sorted(DOCKERFILES))
def test_image_properties(component: str) -> None:
    instructions = dockerfile_instructions(DOCKERFILES[component])
    runtime = final_stage(instructions)

    # Multi-stage, both stages on the same pinned slim base (the venv moves between them).
    froms = [args for keyword, args in instructions if keyword == "FROM"]
    assert len(froms) >= 2, "expected a builder and a runtime stage"
    base_args = [args for keyword, args in instructions if keyword == "ARG" and "=" in args]
    base = dict(arg.split("=", 1) for arg in base_args).get("PYTHON_IMAGE", "")
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim-bookworm(@sha256:[0-9a-f]{64})?", base), base
    assert all(args.split()[0] == "${PYTHON_IMAGE}" for args in froms), froms

    # The project's own metadata drives the install: pyproject's dependency list, then its wheel.
    text = DOCKERFILES[component].read_text(encoding="utf-8")
    assert "['project']['dependencies']" in text
    assert "pip wheel" in text and "/wheels/" in text
    assert "COPY --from=builder /opt/venv /opt/venv" in text

    # Unprivileged, with the fixed UID the manifests' runAsUser names.
    users = [args for keyword, args in runtime if keyword == "USER"]
    assert users and users[-1].split(":")[0] == EXPECTED_UID, users

    # Exec form, so SIGTERM reaches the process rather than a shell; the right console script.
    entrypoint = [args for keyword, args in runtime if keyword == "ENTRYPOINT"]
    assert len(entrypoint) == 1
    argv = json.loads(entrypoint[0])
    script = f"mcp-memory-{component}"
    assert argv[-1].endswith(f"/bin/{script}"), argv
    assert script in project_metadata()["scripts"], script
    for keyword, args in runtime:
        if keyword == "CMD":
            json.loads(args)  # exec form too

    env = " ".join(args for keyword, args in runtime if keyword == "ENV")
    assert "PYTHONDONTWRITEBYTECODE=1" in env and "PYTHONUNBUFFERED=1" in env


@pytest.mark.parametrize("component", sorted(DOCKERFILES))
def test_exposed_port_is_the_one_the_process_binds(component: str) -> None:
    runtime = final_stage(dockerfile_instructions(DOCKERFILES[component]))
    exposed = [int(args.split("/")[0]) for keyword, args in runtime if keyword == "EXPOSE"]
    environ = {}
    for keyword, args in runtime:
        if keyword == "ENV":
            for pair in args.split():
                name, _, value = pair.partition("=")
                if name in {"PORT", "METRICS_PORT", "HOST"}:
                    environ[name] = value
    config = load_config({**environ, "DATABASE_URL": "postgres://u@h/d"})
    expected = config.server.port if component == "api" else config.compactor.metrics_port
    assert exposed == [expected], (exposed, expected)
    assert expected == (3000 if component == "api" else 9300)
    if component == "api":
        # Every interface even under --local: a container's loopback is unreachable from -p.
        assert load_config(environ, local=True).server.hosts == ("0.0.0.0", "::")


@pytest.mark.parametrize("component", sorted(DOCKERFILES))
def test_no_credentials_in_the_image(component: str) -> None:
    for keyword, args in dockerfile_instructions(DOCKERFILES[component]):
        if keyword in {"ENV", "ARG", "LABEL"}:
            assert not re.search(r"(KEY|SECRET|TOKEN|PASSWORD|DATABASE_URL)\b", args, re.I), args
    text = DOCKERFILES[component].read_text(encoding="utf-8")
    assert not re.search(r"AKIA[0-9A-Z]{16}|postgres(ql)?://[^\s<]+:[^\s<@]+@", text)


def test_the_two_images_differ_only_where_they_must() -> None:
    """One build recipe: a fix to one Dockerfile that misses the other shows up here."""
    api = dockerfile_instructions(DOCKERFILES["api"])
    compactor = dockerfile_instructions(DOCKERFILES["compactor"])
    assert [keyword for keyword, _ in api] == [keyword for keyword, _ in compactor]
    differing = [(a, c) for a, c in zip(api, compactor, strict=True) if a != c]
    assert [keyword for (keyword, _), _ in differing] == ["LABEL", "ENV", "EXPOSE", "ENTRYPOINT"]
    for (_, a), (_, c) in differing:
        swapped = (
            a.replace("mcp-memory-api", "mcp-memory-compactor")
            .replace("the API", "the compactor")
            # Only the API reads HOST (the compactor's /metrics listens on every interface).
            .replace("PORT=3000  HOST=0.0.0.0,::", "METRICS_PORT=9300")
        )
        assert swapped == c or (a, c) == ("3000", "9300"), (a, c)


def test_dockerignore_keeps_credentials_and_clutter_out() -> None:
    rules = dockerignore_rules(ROOT / ".dockerignore")
    for path in (
        ".git/config",
        ".venv/bin/python",
        ".env",
        ".env.production",
        "k8s/secret.example.yaml",
        "tests/conftest.py",
        "bench/results/run.json",
        "shared/__pycache__/config.cpython-311.pyc",
        "id_rsa",
        ".aws/credentials",
        "kubeconfig",
    ):
        assert is_ignored(path, rules), path
    for path in ("pyproject.toml", "shared/config.py", "services/__init__.py", "README.md"):
        assert not is_ignored(path, rules), path


def test_every_copy_source_is_in_the_build_context() -> None:
    rules = dockerignore_rules(ROOT / ".dockerignore")
    for path in DOCKERFILES.values():
        for keyword, args in dockerfile_instructions(path):
            if keyword != "COPY" or args.startswith("--from"):
                continue
            for source in args.split()[:-1]:
                assert not is_ignored(source.rstrip("/"), rules), f"{path.name}: {source} ignored"
                if source == "README.md" and not (ROOT / source).exists():
                    pytest.fail("README.md is missing: pyproject names it and both images COPY it")
                assert (ROOT / source).exists(), f"{path.name}: COPY {source}: no such file"


def test_the_wheel_built_from_the_context_carries_the_whole_service(tmp_path: Path) -> None:
    """What the builder stage does, on exactly the files the context would hold."""
    if shutil.which("pip", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("pip is not available beside the interpreter")
    context = tmp_path / "context"
    for relative in build_context(dockerignore_rules(ROOT / ".dockerignore")):
        target = context / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / relative, target)
    wheels = tmp_path / "wheels"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-cache-dir",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(context),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = wheels.glob("mcp_memory-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    assert "shared/config.py" in names
    assert "shared/embedding/data/tokenizer.json" in names  # the local model's tokenizer
    assert "services/__init__.py" in names
    assert not any(name.startswith("tests/") for name in names)
    for script in project_metadata()["scripts"]:
        assert f"{script} = " in scripts, script


def test_a_missing_tool_fails_under_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        require_tool("no-such-tool-for-mcp-memory")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        require_tool("no-such-tool-for-mcp-memory")
