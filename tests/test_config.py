"""load_config: every refusal names the variable and the rule; every default is the design's."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from shared.config import load_config
from shared.errors import ConfigError

# Measured in docs/calibration.md (bench/calibrate_floor.py); a change there must change this.
LOCAL_FLOOR = 0.3

PG = {"DATABASE_URL": "postgres://memory:secret@db:5432/memory"}
S3 = {"VECTOR_BUCKET": "agent-studio-vector", "STATE_BUCKET": "agent-studio-state"}
OPENAI = {
    "EMBEDDING_PROVIDER": "openai",
    "EMBEDDING_BASE_URL": "http://llm.internal:8000/v1",
    "EMBEDDING_API_KEY": "sk-test",
}


def refusal(environ: dict[str, str], *, local: bool = False) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(environ, local=local)
    return str(caught.value)


# --- the relevance floor -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "0.0", "-0.1", "1.5", "abc", "nan", "inf", "-inf"])
def test_recall_min_similarity_outside_zero_to_one_is_refused(value: str) -> None:
    message = refusal({**PG, "RECALL_MIN_SIMILARITY": value})
    assert message == (
        f"RECALL_MIN_SIMILARITY must be a number greater than 0 and at most 1, got {value!r}"
    )


@pytest.mark.parametrize(("value", "expected"), [("1", 1.0), ("0.0001", 0.0001), (" 0.3 ", 0.3)])
def test_recall_min_similarity_inside_the_range_is_taken(value: str, expected: float) -> None:
    assert load_config({**PG, "RECALL_MIN_SIMILARITY": value}).recall.min_similarity == expected


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, 0.30),  # Titan's floor 0.1: the design's 3 x floor
        ({"RECALL_MIN_SIMILARITY": "0.2"}, 0.60),
        ({"RECALL_MIN_SIMILARITY": "0.5"}, 1.0),  # 3 x 0.5 is capped at a cosine's 1
        ({"EMBEDDING_PROVIDER": "local"}, 0.50),  # measured (docs/calibration.md)
        ({"EMBEDDING_PROVIDER": "local", "RECALL_HIGH_SIMILARITY": "0.6"}, 0.60),
    ],
)
def test_the_high_line_is_three_floors_or_the_models_measured_one(
    environ: dict[str, str], expected: float
) -> None:
    config = load_config({**PG, **environ})
    assert config.recall.high_similarity == pytest.approx(expected)


@pytest.mark.parametrize("value", ["0.3", "0.1", "0", "1.5", "high"])
def test_a_high_line_at_or_under_the_floor_or_out_of_range_is_refused(value: str) -> None:
    message = refusal({**PG, "RECALL_MIN_SIMILARITY": "0.3", "RECALL_HIGH_SIMILARITY": value})
    assert message.startswith("RECALL_HIGH_SIMILARITY")
    if value in ("0.3", "0.1"):
        assert message == (
            f"RECALL_HIGH_SIMILARITY ({float(value)}) must be above RECALL_MIN_SIMILARITY (0.3): "
            "a result at the floor is a weak match, never a confident one"
        )
    else:
        assert "must be a number greater than 0 and at most 1" in message


# --- storage backend -------------------------------------------------------------------------


def test_neither_backend_is_refused_naming_both_options() -> None:
    message = refusal({})
    assert message.startswith("no storage is configured")
    assert message.index("DATABASE_URL") < message.index("VECTOR_BUCKET")
    assert "STATE_BUCKET" in message


def test_only_a_vector_bucket_names_the_missing_state_bucket() -> None:
    message = refusal({"VECTOR_BUCKET": "v"})
    assert message.startswith("STATE_BUCKET is required")


def test_only_a_state_bucket_names_the_missing_vector_bucket() -> None:
    message = refusal({"STATE_BUCKET": "s"})
    assert message.startswith("VECTOR_BUCKET is required")


def test_both_buckets_select_s3() -> None:
    config = load_config(S3)
    assert (config.backend, config.s3.vector_bucket, config.s3.state_bucket) == (
        "s3",
        "agent-studio-vector",
        "agent-studio-state",
    )
    assert config.s3.vector_index == "memories"
    assert config.postgres.database_url is None


def test_database_url_beside_both_buckets_means_postgres() -> None:
    config = load_config({**PG, **S3})
    assert config.backend == "postgres"
    assert config.postgres.database_url == PG["DATABASE_URL"]
    assert config.s3.vector_bucket is None
    assert config.s3.state_bucket is None


def test_local_with_database_url_is_refused() -> None:
    message = refusal(PG, local=True)
    assert "--local" in message
    assert "DATABASE_URL" in message


def test_local_selects_the_embedded_database_and_the_local_model() -> None:
    config = load_config({}, local=True, data_dir=Path("/tmp/mcp-memory-test"))
    assert config.backend == "embedded"
    assert config.postgres.data_dir == Path("/tmp/mcp-memory-test")
    assert config.embedding.provider == "local"


def test_local_keeps_an_explicit_provider() -> None:
    config = load_config(OPENAI, local=True)
    assert (config.backend, config.embedding.provider) == ("embedded", "openai")


# --- embedding provider ----------------------------------------------------------------------


def test_an_unknown_provider_is_refused_quoting_it() -> None:
    message = refusal({**PG, "EMBEDDING_PROVIDER": "azure"})
    assert message == "EMBEDDING_PROVIDER must be one of bedrock, openai or local, got 'azure'"


def test_openai_without_base_url_is_refused() -> None:
    environ = {**PG, **OPENAI}
    del environ["EMBEDDING_BASE_URL"]
    assert refusal(environ).startswith("EMBEDDING_BASE_URL is required")


def test_openai_without_api_key_is_refused() -> None:
    environ = {**PG, **OPENAI}
    del environ["EMBEDDING_API_KEY"]
    assert refusal(environ).startswith("EMBEDDING_API_KEY is required")


@pytest.mark.parametrize(
    ("provider", "model", "dim"),
    [
        ("bedrock", "amazon.titan-embed-text-v2:0", 1024),
        ("openai", "text-embedding-3-small", 1536),
        ("local", "all-MiniLM-L6-v2", 384),
    ],
)
def test_each_provider_has_its_own_defaults(provider: str, model: str, dim: int) -> None:
    environ = {**PG, **OPENAI, "EMBEDDING_PROVIDER": provider}
    config = load_config(environ)
    assert (config.embedding.model, config.embedding.dim) == (model, dim)
    expected_floor = {"bedrock": 0.1, "openai": 0.1, "local": LOCAL_FLOOR}[provider]
    assert config.recall.min_similarity == expected_floor


def test_the_default_provider_is_bedrock() -> None:
    config = load_config(PG)
    assert config.embedding.provider == "bedrock"
    assert config.aws.region == "ap-northeast-2"


def test_explicit_model_dim_and_floor_override_the_provider_defaults() -> None:
    config = load_config(
        {
            **PG,
            **OPENAI,
            "EMBEDDING_MODEL": "bge-m3",
            "EMBEDDING_DIM": "1024",
            "RECALL_MIN_SIMILARITY": "0.35",
        }
    )
    assert (config.embedding.model, config.embedding.dim) == ("bge-m3", 1024)
    assert config.recall.min_similarity == 0.35


def test_trailing_slash_is_removed_from_the_base_url() -> None:
    config = load_config({**PG, **OPENAI, "EMBEDDING_BASE_URL": "http://llm.internal:8000/v1/"})
    assert config.embedding.base_url == "http://llm.internal:8000/v1"


def test_bedrock_ignores_base_url_and_key() -> None:
    config = load_config({**PG, "EMBEDDING_BASE_URL": "http://x/v1", "EMBEDDING_API_KEY": "k"})
    assert config.embedding.base_url is None
    assert config.embedding.api_key is None


# --- integers --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["abc", "3.5", "0", "-1", "70000", "1e3"])
def test_a_bad_port_is_refused(value: str) -> None:
    assert refusal({**PG, "PORT": value}) == (
        f"PORT must be an integer between 1 and 65535, got {value!r}"
    )


@pytest.mark.parametrize("name", ["EMBEDDING_DIM", "STATS_FLUSH_MS", "STATS_COMPACT_THRESHOLD"])
@pytest.mark.parametrize("value", ["abc", "1.5", "0", "-5", "ten"])
def test_a_bad_positive_integer_is_refused(name: str, value: str) -> None:
    assert refusal({**PG, name: value}) == f"{name} must be a positive integer, got {value!r}"


def test_integers_are_read_when_valid() -> None:
    config = load_config(
        {**PG, "PORT": "8080", "STATS_FLUSH_MS": "5000", "STATS_COMPACT_THRESHOLD": "3"}
    )
    assert (config.server.port, config.counters.flush_ms, config.counters.compact_threshold) == (
        8080,
        5000,
        3,
    )


def test_integer_defaults() -> None:
    config = load_config(PG)
    assert (config.server.port, config.counters.flush_ms, config.counters.compact_threshold) == (
        3000,
        30000,
        20,
    )


# --- the listening address -------------------------------------------------------------------


def test_local_listens_on_loopback_and_a_server_on_every_interface() -> None:
    # A laptop's --local server has no key; a pod must be reachable from its Service.
    assert load_config({}, local=True).server.hosts == ("127.0.0.1",)
    assert load_config(PG).server.hosts == ("0.0.0.0", "::")
    assert load_config({"HOST": " "}, local=True).server.hosts == ("127.0.0.1",)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.0.0.0", ("0.0.0.0",)),
        ("::1", ("::1",)),
        ("[::1]", ("::1",)),
        ("localhost", ("127.0.0.1",)),
        (" 0.0.0.0 , :: ", ("0.0.0.0", "::")),
        ("127.0.0.1,localhost", ("127.0.0.1",)),
        ("0:0:0:0:0:0:0:1", ("::1",)),
        ("10.1.2.3", ("10.1.2.3",)),
    ],
)
def test_host_chooses_the_addresses(value: str, expected: tuple[str, ...]) -> None:
    assert load_config({"HOST": value}, local=True).server.hosts == expected
    assert load_config({**PG, "HOST": value}).server.hosts == expected


@pytest.mark.parametrize(
    "value", ["my-laptop", "*", "0.0.0.0:3000", "127.0.0.1,", "256.0.0.1", "http://127.0.0.1"]
)
def test_a_bad_host_is_refused_naming_host_and_the_rule(value: str) -> None:
    assert refusal({**PG, "HOST": value}) == (
        "HOST must be an IP address or a comma-separated list of them: 127.0.0.1 or localhost "
        "(this machine only), 0.0.0.0 (every IPv4 interface), 0.0.0.0,:: (every interface), "
        f"got {value!r}"
    )


# --- deadlines ------------------------------------------------------------------------------


def test_deadlines_default_to_the_documented_seconds() -> None:
    config = load_config(S3)
    assert (config.deadlines.storage_s, config.deadlines.tool_s) == (5.0, 20.0)


def test_deadlines_are_read_when_valid() -> None:
    config = load_config({**PG, "STORAGE_TIMEOUT_S": "0.5", "TOOL_TIMEOUT_S": " 3 "})
    assert (config.deadlines.storage_s, config.deadlines.tool_s) == (0.5, 3.0)


@pytest.mark.parametrize("name", ["STORAGE_TIMEOUT_S", "TOOL_TIMEOUT_S"])
@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "301", "5000"])
def test_a_bad_deadline_is_refused_naming_the_variable(name: str, value: str) -> None:
    assert refusal({**PG, name: value}) == (
        f"{name} must be a number of seconds greater than 0 and at most 300, got {value!r}"
    )


@pytest.mark.parametrize(("storage", "tool"), [("5", "5"), ("30", "20"), ("2", "1.5")])
def test_a_tool_deadline_not_above_the_storage_deadline_is_refused(storage: str, tool: str) -> None:
    message = refusal({**PG, "STORAGE_TIMEOUT_S": storage, "TOOL_TIMEOUT_S": tool})
    assert message.startswith(
        f"TOOL_TIMEOUT_S ({float(tool):g}) must be above STORAGE_TIMEOUT_S ({float(storage):g})"
    )


# --- blanks, trimming, the object itself ------------------------------------------------------


def test_blank_values_count_as_unset() -> None:
    config = load_config(
        {
            **S3,
            "DATABASE_URL": "   ",
            "PORT": "",
            "EMBEDDING_PROVIDER": " ",
            "EMBEDDING_DIM": "",
            "RECALL_MIN_SIMILARITY": "\t",
            "MCP_API_KEY": "  ",
            "KNOWLEDGE_BASE_ID": "",
            "VECTOR_INDEX": " ",
            "AWS_REGION": "",
        }
    )
    assert config.backend == "s3"
    assert config.server.port == 3000
    assert config.embedding.provider == "bedrock"
    assert config.embedding.dim == 1024
    assert config.recall.min_similarity == 0.1
    assert config.server.mcp_api_key is None
    assert config.aws.knowledge_base_id is None
    assert config.s3.vector_index == "memories"
    assert config.aws.region == "ap-northeast-2"


def test_a_blank_bucket_counts_as_missing() -> None:
    assert refusal({"VECTOR_BUCKET": "v", "STATE_BUCKET": "  "}).startswith(
        "STATE_BUCKET is required"
    )


def test_values_are_trimmed() -> None:
    config = load_config({"DATABASE_URL": "  postgres://db/m  ", "PORT": " 8080 "})
    assert (config.postgres.database_url, config.server.port) == ("postgres://db/m", 8080)


def test_the_config_is_frozen() -> None:
    config = load_config(PG)
    with pytest.raises(AttributeError):
        config.server = msgspec.structs.replace(config.server, port=1)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        config.server.port = 1  # type: ignore[misc]


# --- one line per setting: each variable lands on its struct's field ---------------------------


@pytest.mark.parametrize(
    ("variable", "value", "setting", "expected"),
    [
        ("PG_SCAN_CACHE_MB", "0", "postgres.scan_cache_mb", 0),
        ("AWS_REGION", "us-east-1", "aws.region", "us-east-1"),
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:4566", "aws.endpoint_url", "http://127.0.0.1:4566"),
        ("KNOWLEDGE_BASE_ID", "KB0001", "aws.knowledge_base_id", "KB0001"),
        ("EMBEDDING_MODEL", "titan-v3", "embedding.model", "titan-v3"),
        ("EMBEDDING_DIM", "256", "embedding.dim", 256),
        ("RECALL_MIN_SIMILARITY", "0.2", "recall.min_similarity", 0.2),
        ("RECALL_HIGH_SIMILARITY", "0.9", "recall.high_similarity", 0.9),
        ("PORT", "8080", "server.port", 8080),
        ("HOST", "127.0.0.1", "server.hosts", ("127.0.0.1",)),
        ("MCP_API_KEY", "key", "server.mcp_api_key", "key"),
        ("UI_PORT", "8081", "server.ui_port", 8081),
        ("LOG_FORMAT", "json", "server.log_format", "json"),
        ("LOG_FORMAT", " Text ", "server.log_format", "text"),
        (
            "TRUSTED_PROXIES",
            "10.0.0.0/8, 192.0.2.7,fd00::/8",
            "server.trusted_proxies",
            ("10.0.0.0/8", "192.0.2.7/32", "fd00::/8"),
        ),
        ("MCP_MEMORY_TENANT", " acme ", "stdio.tenant", "acme"),
        ("MCP_MEMORY_CONVERSATION", "thread-1", "stdio.conversation", "thread-1"),
        ("STATS_FLUSH_MS", "5000", "counters.flush_ms", 5000),
        ("STATS_COMPACT_THRESHOLD", "3", "counters.compact_threshold", 3),
        ("METRICS_PORT", "9400", "compactor.metrics_port", 9400),
        ("COMPACTOR_FOLD_INTERVAL_S", "1.5", "compactor.fold_interval_s", 1.5),
        ("COMPACTOR_GC_INTERVAL_S", "60", "compactor.gc_interval_s", 60.0),
        ("COMPACTOR_RECONCILE_INTERVAL_S", "120", "compactor.reconcile_interval_s", 120.0),
        ("COMPACTOR_EXPIRE_INTERVAL_S", "30", "compactor.expire_interval_s", 30.0),
        ("STORAGE_TIMEOUT_S", "1", "deadlines.storage_s", 1.0),
        ("TOOL_TIMEOUT_S", "30", "deadlines.tool_s", 30.0),
    ],
)
def test_each_variable_lands_on_its_setting(
    variable: str, value: str, setting: str, expected: object
) -> None:
    found: object = load_config({**PG, variable: value})
    for part in setting.split("."):
        found = getattr(found, part)
    assert found == expected


def test_the_stdio_identity_is_unset_unless_given() -> None:
    stdio = load_config({**PG, "MCP_MEMORY_TENANT": "  ", "MCP_MEMORY_CONVERSATION": ""}).stdio
    assert (stdio.tenant, stdio.conversation) == (None, None)


@pytest.mark.parametrize(
    ("variable", "value", "rule"),
    [
        ("PG_SCAN_CACHE_MB", "-1", "a whole number of megabytes, 0 or more"),
        ("METRICS_PORT", "0", "an integer between 1 and 65535"),
        ("UI_PORT", "65536", "an integer between 1 and 65535"),
        ("COMPACTOR_FOLD_INTERVAL_S", "0", "a positive number of seconds"),
        ("COMPACTOR_GC_INTERVAL_S", "nan", "a positive number of seconds"),
        ("COMPACTOR_RECONCILE_INTERVAL_S", "-1", "a positive number of seconds"),
        ("COMPACTOR_EXPIRE_INTERVAL_S", "soon", "a positive number of seconds"),
        ("UI_ENABLED", "yes", "true or false"),
        ("LOG_FORMAT", "yaml", "auto, text or json"),
        (
            "TRUSTED_PROXIES",
            "proxy.internal",
            "IP addresses or networks, comma-separated: 10.0.0.0/8, 192.0.2.7, fd00::/8",
        ),
    ],
)
def test_every_refusal_names_its_variable_and_rule(variable: str, value: str, rule: str) -> None:
    assert refusal({**PG, variable: value}) == f"{variable} must be {rule}, got {value!r}"


def test_unset_settings_take_the_documented_defaults() -> None:
    """The defaults are written once, on the settings structs' fields; the README's values."""
    config = load_config(S3)
    assert (
        config.server.port,
        config.s3.vector_index,
        config.aws.region,
        config.counters.flush_ms,
        config.counters.compact_threshold,
        config.compactor.metrics_port,
        config.compactor.fold_interval_s,
        config.compactor.gc_interval_s,
        config.compactor.reconcile_interval_s,
        config.postgres.scan_cache_mb,
    ) == (3000, "memories", "ap-northeast-2", 30_000, 20, 9300, 15.0, 300.0, 600.0, 128)


def test_the_log_format_is_chosen_by_the_terminal_unless_asked() -> None:
    # auto: text (the banner) when stderr is a terminal, JSON lines otherwise.
    assert load_config(PG).server.log_format == "auto"
    assert load_config({**PG, "LOG_FORMAT": ""}).server.log_format == "auto"
