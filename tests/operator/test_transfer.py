"""``mcp-memory export / import / migrate / reembed`` as real processes, on PostgreSQL and on S3
(moto's server and the S3 Vectors fake), with the local model."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shared.config import load_config
from shared.counters import CounterTracker
from shared.counters.fold import total_counts
from shared.counters.reader import read_tenant
from shared.embedding import Embedder, open_embedder
from shared.lexical import Lexicon
from shared.model import Memory, index_key, iso_ms, new_ulid
from shared.operations import OperationsContext, operations_context
from shared.operations.recall import recall
from shared.revisions import ReplacementLog, read_replacements
from shared.storage import Stores, open_stores
from tests.api._process import clean_env
from tests.conftest import run_admin, with_database
from tests.fakes.aws import create_s3_backend, point_aws_at

CLI = Path(sys.executable).parent / "mcp-memory"
DAY_MS = 86_400_000
TENANT = "acme"
QUERIES = [
    "which port does service 7 listen on",
    "how long do webhook retries wait",
    "where do nightly backups go",
    "what is the deploy day",
]


def facts() -> list[dict[str, Any]]:
    """Forty memories of every shape: tags, categories, a conversation note, an expiring one,
    a replaced one, and access counts."""
    now_ms = time.time_ns() // 1_000_000
    base = now_ms - 30 * DAY_MS
    lines: list[dict[str, Any]] = []
    for n in range(36):
        lines.append(
            {
                "id": new_ulid(base + n * 1000),
                "tenant": TENANT,
                "content": f"Service {n} listens on port {8000 + n} and logs to /var/log/svc{n}.",
                "created_at": iso_ms(base + n * 1000),
                "tags": ["ports"] if n % 2 else [],
                "category": "architecture" if n % 3 == 0 else None,
                "access": n % 4,
                "last_access_at": iso_ms(base + n * 1000 + 500) if n % 4 else None,
            }
        )
    extra = [
        "Webhook retries wait 30 seconds between attempts.",
        "Nightly backups go to the s3://acme-backups bucket.",
        "Deploys go out on Tuesdays at 10:00 UTC.",
        "In this thread we debug the login flow.",
    ]
    for n, content in enumerate(extra):
        created = base + (100 + n) * 1000
        line: dict[str, Any] = {
            "id": new_ulid(created),
            "tenant": TENANT,
            "content": content,
            "created_at": iso_ms(created),
        }
        if n == 3:
            line |= {"scope": "conversation", "conversation": "thread-1", "type": "conversation"}
        if n == 2:
            line["expires_at"] = iso_ms(now_ms + 30 * DAY_MS)
        lines.append(line)
    lines[0]["replaced_by"] = [lines[1]["id"]]
    for line in lines:
        for key in [k for k, v in line.items() if v is None]:
            del line[key]
    return lines


async def cli(*args: str, env: dict[str, str], stdin: bytes | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(CLI),
        *args,
        env=clean_env(EMBEDDING_PROVIDER="local", **env),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 300)
    return process.returncode or 0, out.decode(), err.decode()


def write_lines(path: Path, lines: list[dict[str, Any]] | list[str]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def env_file(path: Path, values: dict[str, str]) -> Path:
    """A --from-env / --to-env file; the local model unless told otherwise."""
    values = {"EMBEDDING_PROVIDER": "local", **values}
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


@pytest.fixture
def postgres_env(pg_server_url: str) -> Any:
    created: list[str] = []

    def make() -> dict[str, str]:
        name = f"op_{uuid.uuid4().hex[:10]}"
        run_admin(pg_server_url, f'CREATE DATABASE "{name}"')
        created.append(name)
        return {"DATABASE_URL": with_database(pg_server_url, name)}

    yield make
    for name in created:
        run_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def s3_env(
    moto_s3_url: str, s3vectors_server: tuple[object, str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    point_aws_at(monkeypatch, s3_url=moto_s3_url, s3vectors_url=s3vectors_server[1])
    suffix = uuid.uuid4().hex[:8]
    buckets = {"VECTOR_BUCKET": f"op-vectors-{suffix}", "STATE_BUCKET": f"op-state-{suffix}"}
    await create_s3_backend(
        s3_url=moto_s3_url,
        s3vectors_url=s3vectors_server[1],
        vector_bucket=buckets["VECTOR_BUCKET"],
        state_bucket=buckets["STATE_BUCKET"],
        dimension=384,
    )
    return {
        **buckets,
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "AKIAFAKEFORTESTS0000",
        "AWS_SECRET_ACCESS_KEY": "fake-secret-for-tests",
        "AWS_CONFIG_FILE": "/nonexistent/aws-config",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL_S3": moto_s3_url,
        "AWS_ENDPOINT_URL_S3VECTORS": s3vectors_server[1],
    }


@pytest.fixture(scope="module")
async def embedder() -> AsyncIterator[Embedder]:
    async with open_embedder(load_config({}, local=True)) as model:
        yield model


async def answers(env: dict[str, str], embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Each query's recalled ids, the tenant's replacement pairs and its access counts."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = load_config({**env, "EMBEDDING_PROVIDER": "local"})
    async with open_stores(config) as stores:
        ops = memory_service(stores, embedder, config)
        recalled = []
        for query in QUERIES:
            answer = await recall(ops, TENANT, None, query=query, mode="balanced", limit=5)
            assert answer.outcome is not None
            recalled.append([r.memory.id for r in answer.outcome.results])
        pairs = sorted((await read_replacements(stores.objects, TENANT)).pairs())
        counters = await read_tenant(stores.objects, TENANT)
        # Folded into merged.json itself: no shard carries them.
        assert counters.shards == {}
        counts = {k: v.access for k, v in total_counts(counters.merged, counters.shards).items()}
        return recalled, pairs, counts


def memory_service(stores: Stores, embedder: Embedder, config: Any) -> OperationsContext:
    clock = lambda: time.time_ns() // 1_000_000  # noqa: E731
    return operations_context(
        vectors=stores.vectors,
        objects=stores.objects,
        embedder=embedder,
        counters=CounterTracker(stores.objects, process_id="probe", compact_threshold=20),
        lexicon=Lexicon(stores.objects, stores.vectors, process_id="probe", clock_ms=clock),
        replacements=ReplacementLog(stores.objects, clock_ms=clock),
        floor=config.recall.min_similarity,
        high_similarity=config.recall.high_similarity,
    )


async def test_a_round_trip_postgres_to_s3_and_back_keeps_ids_answers_and_counts(
    postgres_env: Any,
    s3_env: dict[str, str],
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source, back = postgres_env(), postgres_env()
    lines = facts()
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=source
    )
    assert code == 0, err
    assert f"{len(lines)} memories written, 0 already there" in err
    # PostgreSQL -> S3 with migrate; S3 -> a fresh PostgreSQL with export and import.
    code, _, err = await cli(
        "migrate",
        "--from-env",
        str(env_file(tmp_path / "pg.env", source)),
        "--to-env",
        str(env_file(tmp_path / "s3.env", s3_env)),
        "--tenant",
        TENANT,
        env=s3_env,
    )
    assert code == 0, err
    exported = tmp_path / "from-s3.jsonl"
    code, _, err = await cli("export", "--tenant", TENANT, "--output", str(exported), env=s3_env)
    assert code == 0, err
    # The expiring memory is still ahead of its expiry, so every line travels.
    assert len(exported.read_text().splitlines()) == len(lines)
    code, _, err = await cli("import", "--input", str(exported), env=back)
    assert code == 0, err

    first = await answers(source, embedder, monkeypatch)
    assert first[1] == [(lines[0]["id"], lines[1]["id"])]
    assert sum(first[2].values()) == sum(line.get("access", 0) for line in lines)
    assert await answers(s3_env, embedder, monkeypatch) == first
    assert await answers(back, embedder, monkeypatch) == first


def many(count: int) -> list[dict[str, Any]]:
    base = time.time_ns() // 1_000_000 - DAY_MS
    return [
        {
            "id": new_ulid(base + n),
            "tenant": TENANT,
            "content": f"Generated rule {n}: batch size {16 * n}.",
            "created_at": iso_ms(base + n),
        }
        for n in range(count)
    ]


async def test_import_is_idempotent_and_a_stopped_run_resumes(
    postgres_env: Any, tmp_path: Path
) -> None:
    env = postgres_env()
    lines = many(100)
    broken: list[Any] = list(lines)
    broken[79] = "{not json"  # line 80, in the second batch of 64
    path = write_lines(tmp_path / "broken.jsonl", broken)
    code, _, err = await cli("import", "--input", str(path), env=env)
    assert code == 1
    assert "import refused: line 80:" in err and "nothing was written" in err
    # Refused before the first batch too; a run stopped after it resumes where it left off.
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "head.jsonl", lines[:64])), env=env
    )
    assert code == 0 and "64 memories written" in err, err
    fixed = write_lines(tmp_path / "fixed.jsonl", lines)
    code, _, err = await cli("import", "--input", str(fixed), env=env)
    assert code == 0 and "36 memories written, 64 already there" in err, err
    code, _, err = await cli("import", "--input", str(fixed), env=env)
    assert code == 0 and "nothing to do: all 100 memories are already there" in err, err


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "line 2: not a JSON object"),
        ('{"id": "x"}', "line 2:"),
        (json.dumps({**many(1)[0], "id": "not-a-ulid"}), "line 2: `id` must be a memory id"),
        (json.dumps({**many(1)[0], "content": "   "}), "line 2: `content` must be a non-empty"),
        (json.dumps({**many(1)[0], "colour": "red"}), "line 2:"),
        (json.dumps({**many(1)[0], "created_at": "yesterday"}), "line 2: `created_at` must be"),
        (
            json.dumps({**many(1)[0], "expires_at": "1960-01-01T00:00:00+01:00"}),
            "line 2: `expires_at` must be between 1970-01-01T00:00:00.000Z and 2286-11-20",
        ),
        (json.dumps({**many(1)[0], "scope": "conversation"}), "needs `conversation`"),
        (json.dumps({**many(1)[0], "tenant": "../other"}), "line 2: `tenant` '../other'"),
        (json.dumps({**many(1)[0], "tags": ["t"] * 21}), "line 2: `tags` may hold at most 20"),
        (
            json.dumps({**many(1)[0], "trust_base": 1e6}),
            "line 2: `trust_base` must be between 0 and 1, got 1000000.0",
        ),
        (json.dumps({**many(1)[0], "trust_base": -0.5}), "line 2: `trust_base` must be between"),
        (
            json.dumps({**many(1)[0], "scope": "conversation", "conversation": "c" * 513}),
            "line 2: `conversation` must be at most 512 characters of printable ASCII",
        ),
        (
            json.dumps({**many(1)[0], "scope": "conversation", "conversation": "my chat"}),
            "line 2: `conversation` must be at most 512",
        ),
    ],
)
async def test_a_malformed_line_is_refused_with_its_number_and_nothing_of_it_is_written(
    postgres_env: Any, tmp_path: Path, line: str, expected: str
) -> None:
    env = postgres_env()
    good = many(2)[1]
    path = write_lines(tmp_path / "in.jsonl", [json.dumps(good), line])
    code, out, err = await cli("import", "--input", str(path), env=env)
    assert code == 1 and expected in err, err
    assert out == ""
    code, out, err = await cli("export", "--tenant", TENANT, env=env)
    assert code == 1 and "unknown tenant 'acme': it has no memories" in err, err


async def test_an_unknown_tenant_and_a_bad_tenant_name_are_refused_by_name(
    postgres_env: Any,
) -> None:
    env = postgres_env()
    code, _, err = await cli("export", "--tenant", "nobody", env=env)
    assert code == 1 and "export refused: unknown tenant 'nobody'" in err
    code, _, err = await cli("import", "--tenant", "../x", env=env, stdin=b"")
    assert code == 1 and "--tenant '../x' is not a valid tenant name" in err


async def test_a_wrong_embedding_width_is_refused_before_anything_is_written(
    postgres_env: Any, tmp_path: Path
) -> None:
    env = postgres_env()
    config = load_config({**env, "EMBEDDING_PROVIDER": "local"})
    # The tenant already holds a 3-wide vector, as a store written by another model would.
    async with open_stores(config) as stores:
        now_ms = time.time_ns() // 1_000_000
        other = Memory(id=new_ulid(now_ms), tenant=TENANT, content="x", created_at=iso_ms(now_ms))
        await stores.objects.put(index_key(other), "")
        await stores.vectors.put(other, [1.0, 0.0, 0.0])
    path = write_lines(tmp_path / "in.jsonl", many(3))
    code, _, err = await cli("import", "--input", str(path), env=env)
    assert code == 1 and "holds vectors of another width than this model's (384)" in err, err
    async with open_stores(config) as stores:
        keys = await stores.objects.list(f"index/{TENANT}/")
        assert keys == [index_key(other)]


async def test_reembed_writes_only_into_a_fresh_store(postgres_env: Any, tmp_path: Path) -> None:
    source, target = postgres_env(), postgres_env()
    lines = many(5)
    for env in (source, target):
        code, _, err = await cli(
            "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=env
        )
        assert code == 0, err
    args = ["--from-env", str(env_file(tmp_path / "a.env", source))]
    args += [
        "--to-env",
        str(env_file(tmp_path / "b.env", target)),
    ]
    code, _, err = await cli("reembed", *args, "--all", env={})
    assert code == 1 and "already has memories in the target" in err, err
    fresh = postgres_env()
    args[3] = str(env_file(tmp_path / "c.env", fresh))
    code, _, err = await cli("reembed", *args, "--all", env={})
    assert code == 0 and "5 memories written" in err, err


async def test_import_with_link_updates_links_another_tools_facts_as_remember_would(
    postgres_env: Any, s3_env: dict[str, str], tmp_path: Path
) -> None:
    """Facts from a tool that keeps no links: with --link-updates the later port is linked to
    the earlier one (and recall ranks it first); the same-pattern fact about another service
    is not; without the flag nothing is linked."""
    base = time.time_ns() // 1_000_000 - DAY_MS
    texts = [
        "The billing API listens on port 8080.",
        "The search service listens on port 7700.",
        "The billing API listens on port 9090 now.",
        "The metrics service listens on port 7700.",
    ]
    lines = [
        {
            "id": new_ulid(base + n),
            "tenant": TENANT,
            "content": text,
            "created_at": iso_ms(base + n),
        }
        for n, text in enumerate(texts)
    ]
    path = write_lines(tmp_path / "foreign.jsonl", lines)
    for env, flag in ((postgres_env(), True), (s3_env, True), (postgres_env(), False)):
        code, _, err = await cli(
            "import", "--input", str(path), *(["--link-updates"] if flag else []), env=env
        )
        assert code == 0, err
        code, out, err = await cli("export", "--tenant", TENANT, env=env)
        assert code == 0, err
        linked = {r["id"]: r.get("superseded_by", []) for r in map(json.loads, out.splitlines())}
        expected = [lines[2]["id"]] if flag else []
        assert linked[lines[0]["id"]] == expected
        assert all(linked[line["id"]] == [] for line in lines[1:])


async def test_an_imported_memory_is_found_by_its_tag_at_once(
    postgres_env: Any, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tenant's lexicon exists before the import (a first recall backfilled it): the
    imported memory is found by its tag through the shard the import wrote."""
    env = postgres_env()
    first, tagged = many(2)
    tagged = {**tagged, "content": "Dashboards live in Grafana.", "tags": ["observability"]}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = load_config({**env, "EMBEDDING_PROVIDER": "local"})

    async def recalled(query: str) -> list[str]:
        async with open_stores(config) as stores:
            ops = memory_service(stores, embedder, config)
            answer = await recall(ops, TENANT, None, query=query, mode="balanced", limit=5)
        return [r.memory.id for r in answer.outcome.results] if answer.outcome else []

    for n, line in enumerate((first, tagged)):
        path = write_lines(tmp_path / f"{n}.jsonl", [line])
        code, _, err = await cli("import", "--input", str(path), env=env)
        assert code == 0, err
        if n == 0:
            await recalled("batch size")  # the tenant's lexicon is written (backfilled) here
    assert await recalled("observability") == [tagged["id"]]
