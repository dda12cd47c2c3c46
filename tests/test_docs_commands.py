"""Every shell block of the docs pages, read from the page: run as written where it can run here,
checked against what it names where it needs a cluster, an image registry or an AWS account.

Run as written (each line by bash, in a fresh HOME, as tests/api/test_readme_clients.py runs the
README's): the operator commands of docs/operations.md (export, import, migrate, reembed) and
the ``import --from`` lines of docs/importing.md and docs/operations.md, on the embedded database,
a PostgreSQL database and moto's S3 with the S3 Vectors fake; docs/s3.md's ``aws`` commands,
each turned into the one API call the AWS CLI makes (the same service model, botocore's) against
moto and the fake, then its ``mcp-memory-api`` with the variables it sets, which must start on
what those commands created and store a memory. What is not the docs' own: the server listens on
a free port, the AWS endpoints, dummy credentials and Bedrock (the suite's fake) come from the
environment, and a reembed target's model is the suite's fake OpenAI-compatible service.

Checked, not run: ``kubectl`` (no cluster here) — each command's flags by kubectl itself
(``--help`` after the command's own flags rejects an unknown one), each ``-k`` folder rendered by
kustomize, the namespace, Deployment, Secret keys and namespace label they name against the
rendered manifests, and ``create secret`` run with ``--dry-run=client``; ``docker`` (no daemon,
no registry) — the Dockerfiles, tags, port, volume and the server flags after the image; the
benchmark and the test commands (minutes long, or data sets this machine has not) — their
arguments parsed by their own parsers, or ``--help``/``--collect-only``.

``test_every_shell_block_of_the_docs_has_a_rule`` fails on a block that none of this covers.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import botocore.session
import pytest
import yaml
from aiobotocore.session import get_session
from botocore import xform_name
from botocore.model import StructureShape

from bench.__main__ import _parser as bench_parser
from services.api.main import _parser as api_parser
from tests.api._process import CONSOLE_SCRIPT, remember_over_http, start, stop
from tests.api.test_readme_clients import run, user_env
from tests.conftest import run_admin, with_database
from tests.deploy.render import (
    DOCKERFILES,
    ROOT,
    config_env_names,
    dockerfile_instructions,
    final_stage,
    find,
    kustomize_build,
    one,
    project_metadata,
    require_tool,
)
from tests.deploy.test_manifests import NAMESPACE, rendered
from tests.fakes.aws import MakeS3Environ
from tests.fakes.bedrock_runtime import running_bedrock_runtime
from tests.fakes.openai_embeddings import running_openai_embeddings
from tests.fakes.s3vectors_server import S3VectorsFake
from tests.operator.source_files import (
    basic_memory_folder,
    doobidoo_export,
    mem0_export,
    openmemory_zip,
)

DOCS = ROOT / "docs"
# Each shell block of the docs, by page and by how its first line starts, and the test that runs
# or checks it. A block no rule names, or a rule no block matches, fails the coverage test.
RULES: dict[tuple[str, str], str] = {
    ("deploy.md", "docker build"): "test_the_docker_builds_name_the_dockerfiles_and_the_version",
    ("deploy.md", "docker run"): "test_the_docker_run_publishes_the_api_port_with_server_flags",
    ("deploy.md", "kubectl apply"): "test_the_kubectl_applies_render_and_name_what_they_roll_out",
    (
        "deploy.md",
        "kubectl -n agent-mcps create secret",
    ): "test_the_secret_command_makes_the_secret",
    ("deploy.md", "kubectl label"): "test_the_label_command_sets_the_network_policy_label",
    ("development.md", "pip install"): "test_the_benchmark_command_parses",
    ("importing.md", "mcp-memory import"): "test_the_import_from_commands_run_as_written",
    ("operations.md", "mcp-memory export"): "test_the_transfer_commands_run_as_written",
    ("operations.md", "mcp-memory import"): "test_the_import_from_commands_run_as_written",
    (
        "operations.md",
        "kubectl apply",
    ): "test_the_kubectl_applies_render_and_name_what_they_roll_out",
    ("s3.md", "VECTOR_BUCKET="): "test_the_s3_setup_and_server_run_as_written",
    ("s3.md", "aws s3vectors"): "test_the_s3_setup_and_server_run_as_written",
    ("s3.md", "pytest"): "test_the_s3_test_and_bench_commands_are_valid",
}
# What each export the import commands read holds (one fact of each).
FACTS = {
    "memory.jsonl": "Owned by Maria",
    "export.json": "Nightly backups are copied",
    "mem0-export.json": "dark mode",
    "memories_export_maria.zip": "staging database is refreshed",
    "basic-memory": "Pour over brews at 92 degrees",
}
SH_BLOCK = re.compile(r"```sh\n(.*?)```", flags=re.DOTALL)
MEMORY_JSONL = {
    "type": "entity",
    "name": "Billing API",
    "entityType": "service",
    "observations": ["Owned by Maria"],
}


def sh_blocks(text: str) -> list[str]:
    return list(SH_BLOCK.findall(text))


def rules_for(page: str, block: str) -> list[tuple[str, str]]:
    return [(p, start) for p, start in RULES if p == page and block.startswith(start)]


def block(page: str, start: str) -> str:
    """The one shell block of ``docs/page`` starting with ``start``."""
    (found,) = [b for b in sh_blocks((DOCS / page).read_text()) if b.startswith(start)]
    return found


def lines(text: str) -> list[str]:
    """The block's commands, one a line: continued lines joined, blank lines dropped."""
    return [line.strip() for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def argv(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def uncovered(pages: dict[str, str]) -> list[str]:
    """Each shell block of ``pages`` that no rule, or more than one, covers."""
    return [
        f"{page}: {text.splitlines()[0]!r}"
        for page, content in pages.items()
        for text in sh_blocks(content)
        if len(rules_for(page, text)) != 1
    ]


# ---- the extractor finds every block, and each has one rule ----


def test_every_shell_block_of_the_docs_has_a_rule() -> None:
    pages = {path.name: path.read_text() for path in sorted(DOCS.glob("*.md"))}
    assert uncovered(pages) == []
    counts = {page: len(sh_blocks(text)) for page, text in pages.items() if sh_blocks(text)}
    assert counts == {
        "deploy.md": 5,
        "development.md": 1,
        "importing.md": 1,
        "operations.md": 3,
        "s3.md": 3,
    }
    # Every rule matches a block, and names a test of this module.
    matched: set[tuple[str, str]] = set()
    for page, text in pages.items():
        for found in sh_blocks(text):
            matched |= set(rules_for(page, found))
    assert set(RULES) == matched, set(RULES) - matched
    assert all(callable(globals().get(name)) for name in RULES.values())


def test_the_coverage_check_fails_on_a_block_no_rule_covers() -> None:
    page = (DOCS / "deploy.md").read_text() + "\n```sh\ncurl http://localhost:3000/health\n```\n"
    assert uncovered({"deploy.md": page}) == ["deploy.md: 'curl http://localhost:3000/health'"]
    assert uncovered({"new-page.md": "```sh\nmcp-memory export --local --all\n```\n"})


# ---- run as written ----


@pytest.fixture
def home(embedded_data_dir: Path) -> Path:
    # Under the embedded-safe temporary folder: --local's default data dir lives in HOME.
    return embedded_data_dir / "home"


@pytest.fixture
def database(pg_server_url: str) -> Iterator[Callable[[], str]]:
    """A factory of fresh, empty PostgreSQL databases (their URLs), dropped afterwards."""
    created: list[str] = []

    def make() -> str:
        name = f"docs_{uuid.uuid4().hex[:10]}"
        run_admin(pg_server_url, f'CREATE DATABASE "{name}"')
        created.append(name)
        return with_database(pg_server_url, name)

    yield make
    for name in created:
        run_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def shell(line: str, env: dict[str, str], cwd: Path) -> str:
    """Run one line of a block by bash, as written; its stdout."""
    code, out, err = await run(["bash", "-c", line], env, cwd=cwd)
    assert code == 0, f"{line}\n{out}{err}"
    return out


def write_env(path: Path, values: dict[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))


async def exported(env: dict[str, str], cwd: Path, *store: str) -> str:
    """Every memory of a store (``--local`` or the environment's), as JSON Lines."""
    return await shell(shlex.join(["mcp-memory", "export", *store, "--all"]), env, cwd)


@pytest.mark.parametrize("page", ["importing.md", "operations.md"])
async def test_the_import_from_commands_run_as_written(home: Path, page: str) -> None:
    commands = lines(block(page, "mcp-memory import --local --from"))
    assert len(commands) == (6 if page == "importing.md" else 5)
    # The exports the commands name, in the folder they are run from (and ~ is that HOME).
    env = user_env(home)
    (home / "memory.jsonl").write_text(json.dumps(MEMORY_JSONL) + "\n")
    doobidoo_export(home / "export.json")
    mem0_export(home / "mem0-export.json")
    openmemory_zip(home / "memories_export_maria.zip")
    basic_memory_folder(home / "basic-memory")
    dry_run, *writes = commands
    assert "--dry-run" in argv(dry_run)
    preview = await shell(dry_run, env, home)
    if page == "importing.md":
        assert ">" in dry_run and preview == ""
        preview = (home / "preview.jsonl").read_text()
    assert "Owned by Maria" in preview, preview
    assert await exported(env, home, "--local") == "", "a dry run writes nothing"
    for line in writes:
        await shell(line, env, home)
    stored = [json.loads(line) for line in (await exported(env, home, "--local")).splitlines()]
    assert {memory["tenant"] for memory in stored} == {"my-project"}
    contents = " ".join(memory["content"] for memory in stored)
    # Each written line's input, found in the store (~ and the folder are the same HOME).
    inputs = [Path(words[words.index("--input") + 1]).name for words in map(argv, writes)]
    for name in inputs:
        assert FACTS[name] in contents, (name, contents)


async def test_the_transfer_commands_run_as_written(
    home: Path,
    database: Callable[[], str],
    make_s3_environ: MakeS3Environ,
    moto_s3_url: str,
    s3vectors_server: tuple[S3VectorsFake, str],
) -> None:
    """export and import on the embedded store; migrate from PostgreSQL (pg.env) to S3 (s3.env);
    reembed from that S3 store (old.env) into a fresh one with another model (new-model.env)."""
    export, import_back, migrate, reembed = lines(block("operations.md", "mcp-memory export"))
    env = user_env(home)
    (home / "memory.jsonl").write_text(json.dumps(MEMORY_JSONL) + "\n")
    seed = "mcp-memory import --local --from server-memory --input memory.jsonl --tenant my-project"
    await shell(seed, env, home)
    assert await shell(export, env, home) == ""
    (line,) = (home / "my-project.jsonl").read_text().splitlines()
    assert json.loads(line)["content"] == "Billing API: Owned by Maria", line
    await shell(import_back, env, home)
    assert await exported(env, home, "--local") == (home / "my-project.jsonl").read_text()

    # The stores the env files name: a PostgreSQL database holding that export, fresh buckets.
    _, vectors_url = s3vectors_server
    aws = {
        "AWS_ACCESS_KEY_ID": "AKIAFAKEFORTESTS0000",
        "AWS_SECRET_ACCESS_KEY": "fake-secret-for-tests",
        "AWS_CONFIG_FILE": "/nonexistent/aws-config",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL_S3": moto_s3_url,
        "AWS_ENDPOINT_URL_S3VECTORS": vectors_url,
    }
    env = {**env, **aws}
    pg = {"DATABASE_URL": database(), "EMBEDDING_PROVIDER": "local"}
    write_env(home / "pg.env", pg)
    await shell("mcp-memory import --input my-project.jsonl", {**env, **pg}, home)
    s3 = {**await make_s3_environ(dimension=384), "EMBEDDING_PROVIDER": "local"}
    write_env(home / "s3.env", s3)
    assert set(pg) | set(s3) <= config_env_names()
    await shell(migrate, env, home)
    assert await exported({**env, **s3}, home) == (home / "my-project.jsonl").read_text()

    write_env(home / "old.env", s3)
    async with running_openai_embeddings() as model:
        new_model = {
            "DATABASE_URL": database(),
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_BASE_URL": model.base_url,
            "EMBEDDING_API_KEY": model.api_key,
        }
        write_env(home / "new-model.env", new_model)
        await shell(reembed, env, home)
        assert model.requests, "reembed embeds with the target's model"
    (memory,) = [
        json.loads(line) for line in (await exported({**env, **new_model}, home)).splitlines()
    ]
    assert memory["content"] == "Billing API: Owned by Maria", memory


def aws_call(words: list[str]) -> tuple[str, str, dict[str, Any]]:
    """An ``aws SERVICE COMMAND --flag value …`` line as the API call the AWS CLI makes: the
    service, the operation and its parameters, each flag a member of the operation's input in
    botocore's service model (the CLI's own), JSON or shorthand values parsed as the CLI does."""
    aws, command, operation_name, *flags = words
    assert aws == "aws"
    service = {"s3api": "s3"}.get(command, command)
    model = botocore.session.get_session().get_service_model(service)
    (operation,) = [
        model.operation_model(name)
        for name in model.operation_names
        if xform_name(name, "-") == operation_name
    ]
    members = operation.input_shape.members
    params: dict[str, Any] = {}
    while flags:
        flag, value, *flags = flags
        (name,) = [m for m in members if f"--{xform_name(m, '-')}" == flag]
        shape = members[name]
        if value.startswith(("{", "[")):
            params[name] = json.loads(value)
        elif isinstance(shape, StructureShape):
            params[name] = dict(pair.split("=", 1) for pair in value.split(","))
        elif shape.type_name == "integer":
            params[name] = int(value)
        else:
            params[name] = value
    return service, operation.name, params


async def test_the_s3_setup_and_server_run_as_written(
    home: Path, moto_s3_url: str, s3vectors_server: tuple[S3VectorsFake, str]
) -> None:
    """docs/s3.md's aws commands create the buckets and the index; its mcp-memory-api, with the
    variables it sets, starts on them and stores a memory."""
    (server_line,) = lines(block("s3.md", "VECTOR_BUCKET="))
    *assignments, program = argv(server_line)
    settings = dict(assignment.split("=", 1) for assignment in assignments)
    assert program == "mcp-memory-api" and set(settings) <= config_env_names(), settings
    region = settings["AWS_REGION"]
    endpoints = {"s3": moto_s3_url, "s3vectors": s3vectors_server[1]}
    # The async client: the S3 Vectors fake answers on this test's event loop.
    session = get_session()
    keys = {
        "aws_access_key_id": "AKIAFAKEFORTESTS0000",
        "aws_secret_access_key": "fake-secret-for-tests",
    }
    calls = [aws_call(argv(line)) for line in lines(block("s3.md", "aws s3vectors"))]
    assert [operation for _, operation, _ in calls] == [
        "CreateVectorBucket",
        "CreateIndex",
        "CreateBucket",
    ]
    for service, operation, params in calls:
        async with session.create_client(
            service, region, endpoint_url=endpoints[service], **keys
        ) as client:
            await getattr(client, xform_name(operation))(**params)
    # What the server is told to use is what the commands created.
    assert calls[0][2]["vectorBucketName"] == settings["VECTOR_BUCKET"]
    assert calls[1][2]["indexName"] == settings["VECTOR_INDEX"]
    assert calls[2][2]["Bucket"] == settings["STATE_BUCKET"]
    assert calls[2][2]["CreateBucketConfiguration"]["LocationConstraint"] == region

    async with running_bedrock_runtime() as bedrock:
        env = user_env(home) | settings
        env |= {
            "AWS_ACCESS_KEY_ID": "AKIAFAKEFORTESTS0000",
            "AWS_SECRET_ACCESS_KEY": "fake-secret-for-tests",
            "AWS_CONFIG_FILE": "/nonexistent/aws-config",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_ENDPOINT_URL_S3": moto_s3_url,
            "AWS_ENDPOINT_URL_S3VECTORS": s3vectors_server[1],
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": bedrock.base_url,
        }
        # On a free port of this machine only, as the README tests run the server.
        api = await start([str(CONSOLE_SCRIPT), "--port", "0", "--host", "127.0.0.1"], env)
        try:
            with contextlib.suppress(AssertionError):
                await api.wait_for("listening", timeout_s=60)
            (listening,) = [event for event in api.events if event.get("event") == "listening"] or [
                pytest.fail(f"the server did not start: {api.events}")
            ]
            result = await remember_over_http(
                listening["port"], "We deploy on Tuesdays", tenant="my-project"
            )
            assert result["isError"] is False, result
        finally:
            if api.process.returncode is None:
                api.process.terminate()
                await api.exit_code(timeout_s=30)
            await stop(api)


# ---- checked: needs a cluster, a Docker daemon, data sets or minutes ----


def kubectl_flags_valid(words: list[str]) -> None:
    """kubectl parses the command's flags: with --help after them it prints the usage, and an
    unknown flag is an error."""
    assert words[0] == "kubectl"
    result = subprocess.run(
        [require_tool("kubectl"), *words[1:], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"{shlex.join(words)}: {result.stderr}"


def test_kubectl_flag_check_can_fail() -> None:
    with pytest.raises(AssertionError, match="unknown flag"):
        kubectl_flags_valid(["kubectl", "apply", "--kustomise", "k8s/overlays/s3"])


def test_the_kubectl_applies_render_and_name_what_they_roll_out() -> None:
    applied: list[str] = []
    for page in ("deploy.md", "operations.md"):
        for line in lines(block(page, "kubectl apply")):
            words = argv(line)
            kubectl_flags_valid(words)
            if words[1:3] == ["apply", "-k"]:
                (folder,) = words[3:]
                assert (ROOT / folder / "kustomization.yaml").is_file(), folder
                applied.append(folder)
            else:
                # kubectl -n agent-mcps rollout status deploy/mcp-memory: in every overlay.
                assert words[1:5] == ["-n", NAMESPACE, "rollout", "status"], words
                kind, _, name = words[5].partition("/")
                assert kind == "deploy"
                for overlay in ("s3", "postgres"):
                    deployment = one(list(rendered(overlay)), "Deployment", name)
                    assert deployment["metadata"]["namespace"] == NAMESPACE
    assert sorted(set(applied)) == ["k8s/monitoring", "k8s/overlays/postgres", "k8s/overlays/s3"]
    # deploy.md's comment names the other overlay, which renders too.
    assert "# or: k8s/overlays/postgres" in block("deploy.md", "kubectl apply")
    for folder in set(applied):
        name = folder.rsplit("/", 1)[-1]
        docs = list(rendered(name)) if "overlays" in folder else kustomize_build(ROOT / folder)
        assert {doc["metadata"].get("namespace") for doc in docs} == {NAMESPACE} | (
            {None} if "overlays" in folder else set()
        )


def test_the_secret_command_makes_the_secret() -> None:
    """Run with --dry-run=client (no cluster needed): the Secret the postgres overlay reads."""
    (line,) = lines(block("deploy.md", "kubectl -n agent-mcps create secret"))
    words = argv(line)
    result = subprocess.run(
        [require_tool("kubectl"), *words[1:], "--dry-run=client", "-o", "yaml"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    secret = yaml.safe_load(result.stdout)
    assert secret["kind"] == "Secret"
    assert (secret["metadata"]["name"], secret["metadata"]["namespace"]) == (
        "mcp-memory",
        NAMESPACE,
    )
    required = {
        variable["valueFrom"]["secretKeyRef"]["key"]
        for deployment in find(list(rendered("postgres")), "Deployment")
        for container in deployment["spec"]["template"]["spec"]["containers"]
        for variable in container.get("env", [])
        if "valueFrom" in variable
        and variable["valueFrom"]["secretKeyRef"]["name"] == "mcp-memory"
        and not variable["valueFrom"]["secretKeyRef"].get("optional", False)
    }
    assert set(secret["data"]) == required
    assert required <= config_env_names()


def test_the_label_command_sets_the_network_policy_label() -> None:
    (line,) = lines(block("deploy.md", "kubectl label"))
    words = argv(line)
    kubectl_flags_valid(words)
    assert words[1:3] == ["label", "namespace"]
    key, _, value = words[4].partition("=")
    for overlay in ("s3", "postgres"):
        selectors = [
            peer["namespaceSelector"]["matchLabels"]
            for policy in find(list(rendered(overlay)), "NetworkPolicy")
            for rule in policy["spec"]["ingress"]
            for peer in rule.get("from", [])
            if "namespaceSelector" in peer and "podSelector" not in peer
        ]
        assert {key: value} in selectors, selectors


def test_the_docker_builds_name_the_dockerfiles_and_the_version() -> None:
    version = project_metadata()["version"]
    built = []
    for line in lines(block("deploy.md", "docker build")):
        words = argv(line)
        assert words[:2] == ["docker", "build"] and words[2] == "-f" and words[4] == "-t"
        assert words[6:] == ["."], "the build context is the repository"
        dockerfile, tag = ROOT / words[3], words[5]
        component = dockerfile.suffix.lstrip(".")
        assert DOCKERFILES[component] == dockerfile
        assert tag == f"<registry>/mcp-memory-{component}:{version}", tag
        built.append(tag)
    assert len(built) == len(DOCKERFILES)


def test_the_docker_run_publishes_the_api_port_with_server_flags() -> None:
    (line,) = lines(block("deploy.md", "docker run"))
    words = argv(line)
    assert words[:3] == ["docker", "run", "--rm"]
    assert words[3] == "-p" and words[5] == "-v"
    host, host_port, container_port = words[4].split(":")
    # The port the image exposes, which tests/deploy/test_images.py holds to the one it binds.
    runtime = final_stage(dockerfile_instructions(DOCKERFILES["api"]))
    exposed = [args.split("/")[0] for keyword, args in runtime if keyword == "EXPOSE"]
    assert host == "127.0.0.1" and exposed == [container_port], (words[4], exposed)
    assert host_port == container_port
    volume, mount = words[6].split(":")
    image, *server = words[7:]
    assert image == f"<registry>/mcp-memory-api:{project_metadata()['version']}"
    flags = api_parser().parse_args(server)
    assert flags.local and str(flags.data_dir) == mount == "/data", flags
    assert volume == "mcp-memory-data"


def test_the_benchmark_command_parses() -> None:
    """Not run: it reads data sets this machine has not and takes minutes; its arguments parse
    with the runner's own parser, and the extra it installs exists."""
    (line,) = lines(block("development.md", "pip install"))
    install, run_bench = line.split(" && ")
    assert argv(install) == ["pip", "install", "-e", ".[bench]"]
    assert "bench" in project_metadata()["optional-dependencies"]
    words = argv(run_bench)
    assert words[:3] == ["python", "-m", "bench"]
    flags = bench_parser().parse_args(words[3:])
    assert flags.data == Path("/path/to/bench-data") and flags.out == Path("bench/results")


def test_the_s3_test_and_bench_commands_are_valid() -> None:
    """Not run: the contract suites and the latency benchmark take minutes (the full suite runs
    the first). pytest collects what it names; the benchmark script parses its arguments."""
    run_tests, run_bench = (argv(line) for line in lines(block("s3.md", "pytest")))
    assert run_tests[0] == "pytest" and run_bench[:2] == ["python", "bench/bench_s3.py"]
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *run_tests[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    (summary,) = [x for x in collected.stdout.splitlines() if re.match(r"\d+ tests? collected", x)]
    assert int(summary.split()[0]) > 0, summary
    helped = subprocess.run(
        [sys.executable, *run_bench[1:], "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert helped.returncode == 0 and "--preload" in helped.stdout, helped.stderr


def test_the_iam_policy_names_what_the_setup_creates() -> None:
    """docs/s3.md's IAM policy (JSON) grants on the buckets and index its commands create."""
    (policy,) = re.findall(r"```json\n(.*?)```", (DOCS / "s3.md").read_text(), flags=re.DOTALL)
    statements = {s["Sid"]: s for s in json.loads(policy)["Statement"]}
    (server_line,) = lines(block("s3.md", "VECTOR_BUCKET="))
    settings = dict(word.split("=", 1) for word in argv(server_line)[:-1])
    vectors = statements["Memories"]["Resource"]
    assert vectors.endswith(f":bucket/{settings['VECTOR_BUCKET']}/index/{settings['VECTOR_INDEX']}")
    assert f":{settings['AWS_REGION']}:" in vectors
    assert statements["StateListing"]["Resource"] == f"arn:aws:s3:::{settings['STATE_BUCKET']}"
