"""Configuration: read from the environment once, validated completely before any port is bound.

:func:`load_config` is the only reader of the environment for settings (the allocator only asks
whether glibc's own MALLOC_* variables are set, and a process's id reads HOSTNAME: neither is a
setting). One struct per part it configures, one line per setting: its field and default on
that struct, its variable and rule in the struct's reader. Every refusal raises
:class:`~shared.errors.ConfigError` with one line naming the variable and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal, TypeVar

import msgspec

from shared.errors import ConfigError
from shared.process.cli import DEFAULT_DATA_DIR
from shared.process.listen import ALL_INTERFACES, LOOPBACK, is_loopback_only
from shared.process.logs import LogFormat
from shared.process.setting_kinds import (
    DEADLINE,
    FLAG,
    GRACE,
    HOSTS,
    LOG_FORMAT,
    MEGABYTES,
    NETWORKS,
    PORT,
    POSITIVE_INT,
    SECONDS,
    SIMILARITY,
    Kind,
)

Backend = Literal["postgres", "embedded", "s3"]
Provider = Literal["bedrock", "openai", "local"]

PROVIDERS: Final[tuple[Provider, ...]] = ("bedrock", "openai", "local")


class ProviderDefaults(msgspec.Struct, frozen=True, kw_only=True):
    """``high_similarity``: the cosine at which a top result is HIGH confidence; None keeps the
    design's three times the floor, which Titan reaches (docs/calibration.md)."""

    model: str
    dim: int
    min_similarity: float
    high_similarity: float | None = None


PROVIDER_DEFAULTS: Final[dict[Provider, ProviderDefaults]] = {
    "bedrock": ProviderDefaults(model="amazon.titan-embed-text-v2:0", dim=1024, min_similarity=0.1),
    "openai": ProviderDefaults(model="text-embedding-3-small", dim=1536, min_similarity=0.1),
    # Measured, not guessed: between where this model puts correct answers to reworded
    # questions and the best hit of a question about nothing stored, 0.30 misplaces the fewest
    # (docs/calibration.md, bench/calibrate_floor.py).
    # 3 × 0.30 = 0.90 is above every question-to-memory cosine measured on this model, so its
    # HIGH line is measured too: the cosine above which the top result was right at a precision
    # of at least 0.9 on the calibration sets (docs/calibration.md).
    "local": ProviderDefaults(
        model="all-MiniLM-L6-v2", dim=384, min_similarity=0.3, high_similarity=0.50
    ),
}


class PostgresSettings(msgspec.Struct, frozen=True, kw_only=True):
    """A PostgreSQL server (``backend`` "postgres") or the embedded one (``--local``)."""

    database_url: str | None = None  # DATABASE_URL
    data_dir: Path | None = None  # --data-dir (the embedded database's folder)
    # Bytes of tenant snapshots kept for the exact scan (0: scan in SQL always).
    scan_cache_mb: int = 128  # PG_SCAN_CACHE_MB
    # How long the embedded server outlives the last local process using it (0: it stops with
    # that process). Unset, each kind of process has its own default (``with_stdio_grace``).
    embedded_grace_s: float | None = None  # PG_EMBEDDED_GRACE_S
    # False: join the embedded server only while a keeper serves it, never start one (the stdio
    # resident, which must not bring back a database stopped meanwhile). Not a setting.
    embedded_start: bool = True


class S3Settings(msgspec.Struct, frozen=True, kw_only=True):
    """S3 Vectors for the memories, S3 for the state (``backend`` "s3")."""

    vector_bucket: str | None = None  # VECTOR_BUCKET
    vector_index: str = "memories"  # VECTOR_INDEX
    state_bucket: str | None = None  # STATE_BUCKET


class AwsSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What every AWS client reads: S3, Bedrock's embeddings, the docs knowledge base."""

    region: str = "ap-northeast-2"  # AWS_REGION
    endpoint_url: str | None = None  # AWS_ENDPOINT_URL
    knowledge_base_id: str | None = None  # KNOWLEDGE_BASE_ID (search_docs offered when set)


class EmbeddingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The embedding provider; model and dimension default per provider (PROVIDER_DEFAULTS)."""

    provider: Provider = "bedrock"  # EMBEDDING_PROVIDER
    model: str  # EMBEDDING_MODEL
    dim: int  # EMBEDDING_DIM
    base_url: str | None = None  # EMBEDDING_BASE_URL (openai only)
    api_key: str | None = None  # EMBEDDING_API_KEY (openai only)


class RecallSettings(msgspec.Struct, frozen=True, kw_only=True):
    min_similarity: float  # RECALL_MIN_SIMILARITY: the relevance floor
    # RECALL_HIGH_SIMILARITY: the cosine at which a top result is HIGH (see ProviderDefaults).
    high_similarity: float


class ServerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The API's listening sockets and the key they ask for."""

    port: int = 3000  # PORT
    # HOST: the listening addresses (shared/process/listen.py): loopback under --local, else
    # every one.
    hosts: tuple[str, ...] = ALL_INTERFACES
    mcp_api_key: str | None = None  # MCP_API_KEY
    # UI_ENABLED: the memory page (services/api/ui), on by default only where it needs no key.
    ui_enabled: bool = False
    ui_port: int = 3001  # UI_PORT
    # TRUSTED_PROXIES: the proxies whose X-Forwarded-For names the client a wrong key is
    # counted against (services/api/http/throttle.py); none by default: the peer is the client.
    trusted_proxies: tuple[str, ...] = ()
    # LOG_FORMAT: text (a start-up banner, then plain lines), json (JSON lines) or auto: text
    # when stderr is a terminal (shared/process/logs.py). --stdio always logs JSON to stderr.
    log_format: LogFormat = "auto"


class StdioSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Who a ``--stdio`` server's calls are from: stdio has no headers
    (services/api/stdio/transport.py)."""

    tenant: str | None = None  # MCP_MEMORY_TENANT
    conversation: str | None = None  # MCP_MEMORY_CONVERSATION


class CounterSettings(msgspec.Struct, frozen=True, kw_only=True):
    flush_ms: int = 30_000  # STATS_FLUSH_MS: how often access counts go out as a shard
    compact_threshold: int = 20  # STATS_COMPACT_THRESHOLD: shards that make a reader fold


class CompactorSettings(msgspec.Struct, frozen=True, kw_only=True):
    metrics_port: int = 9300  # METRICS_PORT
    fold_interval_s: float = 15.0  # COMPACTOR_FOLD_INTERVAL_S
    gc_interval_s: float = 300.0  # COMPACTOR_GC_INTERVAL_S
    reconcile_interval_s: float = 600.0  # COMPACTOR_RECONCILE_INTERVAL_S
    expire_interval_s: float = 300.0  # COMPACTOR_EXPIRE_INTERVAL_S


class DeadlineSettings(msgspec.Struct, frozen=True, kw_only=True):
    """One storage call (a request to S3 or S3 Vectors, a PostgreSQL call) answers in
    milliseconds; five seconds is only ever a stalled store. A tool call makes several of them
    plus an embedding, and must still answer well inside an MCP client's patience (~90 s)."""

    storage_s: float = 5.0  # STORAGE_TIMEOUT_S
    tool_s: float = 20.0  # TOOL_TIMEOUT_S


class Config(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the processes read from their environment, already validated."""

    backend: Backend
    embedding: EmbeddingSettings
    recall: RecallSettings
    postgres: PostgresSettings = PostgresSettings()
    s3: S3Settings = S3Settings()
    aws: AwsSettings = AwsSettings()
    server: ServerSettings = ServerSettings()
    stdio: StdioSettings = StdioSettings()
    counters: CounterSettings = CounterSettings()
    compactor: CompactorSettings = CompactorSettings()
    deadlines: DeadlineSettings = DeadlineSettings()


T = TypeVar("T")


class _Env:
    """Trimmed reads where blank counts as unset, with typed casts that name the variable."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def text(self, name: str) -> str | None:
        value = self._environ.get(name, "").strip()
        return value or None

    def given(self, name: str, kind: Kind[T]) -> T | None:
        raw = self.text(name)
        if raw is None:
            return None
        try:
            return kind.parse(raw)
        except ValueError:
            raise ConfigError(f"{name} must be {kind.rule}, got {raw!r}") from None

    def read(self, name: str, kind: Kind[T], default: T) -> T:
        value = self.given(name, kind)
        return default if value is None else value


def _choose_backend(env: _Env, *, local: bool) -> Backend:
    if local:
        if env.text("DATABASE_URL"):
            raise ConfigError(
                "--local runs its own embedded database; unset DATABASE_URL or drop --local"
            )
        return "embedded"
    if env.text("DATABASE_URL"):
        return "postgres"
    vector_bucket, state_bucket = env.text("VECTOR_BUCKET"), env.text("STATE_BUCKET")
    if vector_bucket is None and state_bucket is None:
        raise ConfigError(
            "no storage is configured: set DATABASE_URL for PostgreSQL, or VECTOR_BUCKET and "
            "STATE_BUCKET for S3, or run with --local for the embedded database"
        )
    if vector_bucket is None:
        raise ConfigError("VECTOR_BUCKET is required when STATE_BUCKET is set (S3 backend)")
    if state_bucket is None:
        raise ConfigError("STATE_BUCKET is required when VECTOR_BUCKET is set (S3 backend)")
    return "s3"


def _postgres(env: _Env, backend: Backend, data_dir: Path | None) -> PostgresSettings:
    unset = PostgresSettings()
    return PostgresSettings(
        database_url=env.text("DATABASE_URL") if backend == "postgres" else None,
        data_dir=(data_dir or DEFAULT_DATA_DIR) if backend == "embedded" else None,
        scan_cache_mb=env.read("PG_SCAN_CACHE_MB", MEGABYTES, unset.scan_cache_mb),
        embedded_grace_s=env.given("PG_EMBEDDED_GRACE_S", GRACE),
    )


def _s3(env: _Env, backend: Backend) -> S3Settings:
    s3 = backend == "s3"
    return S3Settings(
        vector_bucket=env.text("VECTOR_BUCKET") if s3 else None,
        vector_index=env.text("VECTOR_INDEX") or S3Settings().vector_index,
        state_bucket=env.text("STATE_BUCKET") if s3 else None,
    )


def _aws(env: _Env) -> AwsSettings:
    return AwsSettings(
        region=env.text("AWS_REGION") or AwsSettings().region,
        endpoint_url=env.text("AWS_ENDPOINT_URL"),
        knowledge_base_id=env.text("KNOWLEDGE_BASE_ID"),
    )


def _choose_provider(env: _Env, *, local: bool) -> Provider:
    raw = env.text("EMBEDDING_PROVIDER")
    if raw is None:
        return "local" if local else "bedrock"
    if raw not in PROVIDERS:
        raise ConfigError(
            f"EMBEDDING_PROVIDER must be one of bedrock, openai or local, got {raw!r}"
        )
    return raw


def _embedding(env: _Env, provider: Provider) -> EmbeddingSettings:
    defaults = PROVIDER_DEFAULTS[provider]
    base_url, api_key = env.text("EMBEDDING_BASE_URL"), env.text("EMBEDDING_API_KEY")
    if provider == "openai":
        if base_url is None:
            raise ConfigError("EMBEDDING_BASE_URL is required when EMBEDDING_PROVIDER=openai")
        if api_key is None:
            raise ConfigError("EMBEDDING_API_KEY is required when EMBEDDING_PROVIDER=openai")
    return EmbeddingSettings(
        provider=provider,
        model=env.text("EMBEDDING_MODEL") or defaults.model,
        dim=env.read("EMBEDDING_DIM", POSITIVE_INT, defaults.dim),
        base_url=base_url.rstrip("/") if provider == "openai" and base_url else None,
        api_key=api_key if provider == "openai" else None,
    )


def _recall(env: _Env, defaults: ProviderDefaults) -> RecallSettings:
    floor = env.read("RECALL_MIN_SIMILARITY", SIMILARITY, defaults.min_similarity)
    high = env.given("RECALL_HIGH_SIMILARITY", SIMILARITY)
    if high is None:
        high = max(defaults.high_similarity or min(1.0, 3 * floor), floor)
    elif high <= floor:
        raise ConfigError(
            f"RECALL_HIGH_SIMILARITY ({high}) must be above RECALL_MIN_SIMILARITY ({floor}): "
            "a result at the floor is a weak match, never a confident one"
        )
    return RecallSettings(min_similarity=floor, high_similarity=high)


def _deadlines(env: _Env) -> DeadlineSettings:
    unset = DeadlineSettings()
    storage = env.read("STORAGE_TIMEOUT_S", DEADLINE, unset.storage_s)
    tool = env.read("TOOL_TIMEOUT_S", DEADLINE, unset.tool_s)
    if tool <= storage:
        raise ConfigError(
            f"TOOL_TIMEOUT_S ({tool:g}) must be above STORAGE_TIMEOUT_S ({storage:g}): a tool "
            "call makes storage calls, and a stalled store should be named as the cause"
        )
    return DeadlineSettings(storage_s=storage, tool_s=tool)


def _ui_enabled(env: _Env, *, local: bool, hosts: tuple[str, ...], api_key: str | None) -> bool:
    """The memory page shows and deletes any tenant's memories, so without a key it is served
    only where nothing but this machine reaches it: ``--local`` on a loopback address. It is on
    there by default; anywhere else only when UI_ENABLED=true asks, and then only with a key."""
    enabled = env.given("UI_ENABLED", FLAG)
    keyless = local and is_loopback_only(hosts)
    if enabled is None:
        return local and (keyless or api_key is not None)
    if enabled and not keyless and api_key is None:
        raise ConfigError(
            "UI_ENABLED=true needs MCP_API_KEY unless the server runs with --local on a loopback "
            "HOST: the memory page reads and deletes every tenant's memories, so it asks for "
            "the key"
        )
    return enabled


def _server(env: _Env, *, local: bool, port: int, hosts: tuple[str, ...]) -> ServerSettings:
    api_key = env.text("MCP_API_KEY")
    return ServerSettings(
        port=port,
        hosts=hosts,
        mcp_api_key=api_key,
        ui_enabled=_ui_enabled(env, local=local, hosts=hosts, api_key=api_key),
        ui_port=env.read("UI_PORT", PORT, ServerSettings().ui_port),
        trusted_proxies=env.read("TRUSTED_PROXIES", NETWORKS, ()),
        log_format=env.read("LOG_FORMAT", LOG_FORMAT, ServerSettings().log_format),
    )


def _counters(env: _Env) -> CounterSettings:
    unset = CounterSettings()
    return CounterSettings(
        flush_ms=env.read("STATS_FLUSH_MS", POSITIVE_INT, unset.flush_ms),
        compact_threshold=env.read(
            "STATS_COMPACT_THRESHOLD", POSITIVE_INT, unset.compact_threshold
        ),
    )


def _compactor(env: _Env) -> CompactorSettings:
    unset = CompactorSettings()
    return CompactorSettings(
        metrics_port=env.read("METRICS_PORT", PORT, unset.metrics_port),
        fold_interval_s=env.read("COMPACTOR_FOLD_INTERVAL_S", SECONDS, unset.fold_interval_s),
        gc_interval_s=env.read("COMPACTOR_GC_INTERVAL_S", SECONDS, unset.gc_interval_s),
        reconcile_interval_s=env.read(
            "COMPACTOR_RECONCILE_INTERVAL_S", SECONDS, unset.reconcile_interval_s
        ),
        expire_interval_s=env.read("COMPACTOR_EXPIRE_INTERVAL_S", SECONDS, unset.expire_interval_s),
    )


def load_config(
    environ: Mapping[str, str], *, local: bool = False, data_dir: Path | None = None
) -> Config:
    """Validate the whole environment; the first broken rule raises ConfigError.

    Args:
        environ: the process environment (tests pass a dict).
        local: ``--local`` was given: use the embedded PostgreSQL in ``data_dir`` and, unless
            EMBEDDING_PROVIDER says otherwise, the local embedding model; and unless HOST says
            otherwise, listen on loopback only (a laptop's server has no key).
        data_dir: where the embedded database lives; defaults to ~/.local/share/mcp-memory.
    """
    env = _Env(environ)
    port = env.read("PORT", PORT, ServerSettings().port)
    hosts = env.read("HOST", HOSTS, LOOPBACK if local else ALL_INTERFACES)
    backend = _choose_backend(env, local=local)
    provider = _choose_provider(env, local=local)
    embedding = _embedding(env, provider)
    deadlines = _deadlines(env)
    return Config(
        backend=backend,
        embedding=embedding,
        recall=_recall(env, PROVIDER_DEFAULTS[provider]),
        postgres=_postgres(env, backend, data_dir),
        s3=_s3(env, backend),
        aws=_aws(env),
        server=_server(env, local=local, port=port, hosts=hosts),
        stdio=StdioSettings(
            tenant=env.text("MCP_MEMORY_TENANT"), conversation=env.text("MCP_MEMORY_CONVERSATION")
        ),
        counters=_counters(env),
        compactor=_compactor(env),
        deadlines=deadlines,
    )
