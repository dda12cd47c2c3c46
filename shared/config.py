"""Configuration: read from the environment once, validated completely before any port is bound.

:func:`load_config` is the only reader of environment variables in the project. Every refusal
raises :class:`~shared.errors.ConfigError` with one line naming the variable and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import msgspec

from shared.errors import ConfigError
from shared.listen import ALL_INTERFACES, HOST_RULE, LOOPBACK, is_loopback_only, parse_hosts

Backend = Literal["postgres", "embedded", "s3"]
Provider = Literal["bedrock", "openai", "local"]

PROVIDERS: Final[tuple[Provider, ...]] = ("bedrock", "openai", "local")
DEFAULT_DATA_DIR: Final = Path.home() / ".local" / "share" / "mcp-memory"
MAX_DEADLINE_S: Final = 300.0


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
    # Measured, not guessed: on this model correct answers to reworded questions sit at 0.22-0.83
    # and the best hit of a question about nothing stored at 0.13-0.45; 0.30 misplaces the fewest
    # (docs/calibration.md, bench/calibrate_floor.py).
    # 3 × 0.30 = 0.90 is above every question-to-memory cosine measured on this model, so its
    # HIGH line is measured too: the cosine above which the top result was right at a precision
    # of at least 0.9 on the calibration sets (docs/calibration.md).
    "local": ProviderDefaults(
        model="all-MiniLM-L6-v2", dim=384, min_similarity=0.3, high_similarity=0.50
    ),
}


class Config(msgspec.Struct, frozen=True, kw_only=True):
    """Everything both processes read from their environment, already validated."""

    backend: Backend
    database_url: str | None = None
    data_dir: Path | None = None
    vector_bucket: str | None = None
    vector_index: str = "memories"
    state_bucket: str | None = None
    aws_region: str = "ap-northeast-2"
    aws_endpoint_url: str | None = None
    knowledge_base_id: str | None = None
    embedding_provider: Provider = "bedrock"
    embedding_model: str
    embedding_dim: int
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
    recall_min_similarity: float
    # The cosine at which a top result is HIGH confidence (see ProviderDefaults).
    recall_high_similarity: float
    port: int = 3000
    # The API's listening addresses (shared/listen.py): loopback under --local, else every one.
    hosts: tuple[str, ...] = ALL_INTERFACES
    mcp_api_key: str | None = None
    stats_flush_ms: int = 30_000
    stats_compact_threshold: int = 20
    metrics_port: int = 9300
    fold_interval_s: float = 15.0
    gc_interval_s: float = 300.0
    reconcile_interval_s: float = 600.0
    expire_interval_s: float = 300.0
    # PostgreSQL only: bytes of tenant snapshots kept for the exact scan (0: scan in SQL always).
    pg_scan_cache_mb: int = 128
    # Deadlines. One storage call (a request to S3 or S3 Vectors, a PostgreSQL call) answers in
    # milliseconds; five seconds is only ever a stalled store. A tool call makes several of them
    # plus an embedding, and must still answer well inside an MCP client's patience (~90 s).
    storage_timeout_s: float = 5.0
    tool_timeout_s: float = 20.0
    # The memory page (services/api/ui): on by default only where it needs no key (_ui_enabled).
    ui_enabled: bool = False
    ui_port: int = 3001


T = TypeVar("T")

# Each setting's default is written once, on its Config field; load_config reads it from there.
_FIELD_DEFAULTS: Final[dict[str, Any]] = {
    field.name: field.default
    for field in msgspec.structs.fields(Config)
    if field.default is not msgspec.NODEFAULT
}


def _default(name: str) -> Any:
    return _FIELD_DEFAULTS[name]


class _Env:
    """Trimmed reads where blank counts as unset, with typed casts that name the variable."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def text(self, name: str) -> str | None:
        value = self._environ.get(name, "").strip()
        return value or None

    def cast(self, name: str, parse: Callable[[str], T], default: T, rule: str) -> T:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            return parse(raw)
        except ValueError:
            raise ConfigError(f"{name} must be {rule}, got {raw!r}") from None


def _positive_int(raw: str) -> int:
    value = int(raw)
    if value <= 0:
        raise ValueError(raw)
    return value


def _non_negative_int(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError(raw)
    return value


def _port(raw: str) -> int:
    value = int(raw)
    if not 0 < value < 65536:
        raise ValueError(raw)
    return value


def _positive_float(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(raw)
    return value


def _deadline_s(raw: str) -> float:
    value = float(raw)
    # Above five minutes is a unit mistake (milliseconds), not a deadline anyone could wait out.
    if not math.isfinite(value) or not 0 < value <= MAX_DEADLINE_S:
        raise ValueError(raw)
    return value


def _similarity_floor(raw: str) -> float:
    value = float(raw)
    # Zero admits every hit, and confidence is a multiple of the floor: everything would be HIGH.
    if not math.isfinite(value) or not 0 < value <= 1:
        raise ValueError(raw)
    return value


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


def _choose_provider(env: _Env, *, local: bool) -> Provider:
    raw = env.text("EMBEDDING_PROVIDER")
    if raw is None:
        return "local" if local else "bedrock"
    if raw not in PROVIDERS:
        raise ConfigError(
            f"EMBEDDING_PROVIDER must be one of bedrock, openai or local, got {raw!r}"
        )
    return raw


def _high_similarity(env: _Env, defaults: ProviderDefaults, floor: float) -> float:
    default = defaults.high_similarity or min(1.0, 3 * floor)
    value = env.cast(
        "RECALL_HIGH_SIMILARITY",
        _similarity_floor,
        default,
        "a number greater than 0 and at most 1",
    )
    if env.text("RECALL_HIGH_SIMILARITY") is None:
        return max(value, floor)
    if value <= floor:
        raise ConfigError(
            f"RECALL_HIGH_SIMILARITY ({value}) must be above RECALL_MIN_SIMILARITY ({floor}): "
            "a result at the floor is a weak match, never a confident one"
        )
    return value


def _deadlines(env: _Env) -> tuple[float, float]:
    rule = f"a number of seconds greater than 0 and at most {MAX_DEADLINE_S:g}"
    storage = env.cast("STORAGE_TIMEOUT_S", _deadline_s, _default("storage_timeout_s"), rule)
    tool = env.cast("TOOL_TIMEOUT_S", _deadline_s, _default("tool_timeout_s"), rule)
    if tool <= storage:
        raise ConfigError(
            f"TOOL_TIMEOUT_S ({tool:g}) must be above STORAGE_TIMEOUT_S ({storage:g}): a tool "
            "call makes storage calls, and a stalled store should be named as the cause"
        )
    return storage, tool


def _flag(raw: str) -> bool:
    lowered = raw.lower()
    if lowered not in ("true", "false", "1", "0"):
        raise ValueError(raw)
    return lowered in ("true", "1")


def _ui_enabled(env: _Env, *, local: bool, hosts: tuple[str, ...], api_key: str | None) -> bool:
    """The memory page shows and deletes any tenant's memories, so without a key it is served
    only where nothing but this machine reaches it: ``--local`` on a loopback address. It is on
    there by default; anywhere else only when UI_ENABLED=true asks, and then only with a key."""
    enabled = env.cast("UI_ENABLED", _flag, None, "true or false")
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
    port = env.cast("PORT", _port, _default("port"), "an integer between 1 and 65535")
    hosts = env.cast("HOST", parse_hosts, LOOPBACK if local else ALL_INTERFACES, HOST_RULE)
    backend = _choose_backend(env, local=local)
    provider = _choose_provider(env, local=local)
    defaults = PROVIDER_DEFAULTS[provider]
    base_url = env.text("EMBEDDING_BASE_URL")
    api_key = env.text("EMBEDDING_API_KEY")
    if provider == "openai":
        if base_url is None:
            raise ConfigError("EMBEDDING_BASE_URL is required when EMBEDDING_PROVIDER=openai")
        if api_key is None:
            raise ConfigError("EMBEDDING_API_KEY is required when EMBEDDING_PROVIDER=openai")
        base_url = base_url.rstrip("/")
    else:
        base_url, api_key = None, None
    s3 = backend == "s3"
    storage_timeout_s, tool_timeout_s = _deadlines(env)
    mcp_key = env.text("MCP_API_KEY")
    floor = env.cast(
        "RECALL_MIN_SIMILARITY",
        _similarity_floor,
        defaults.min_similarity,
        "a number greater than 0 and at most 1",
    )
    return Config(
        backend=backend,
        database_url=env.text("DATABASE_URL") if backend == "postgres" else None,
        data_dir=(data_dir or DEFAULT_DATA_DIR) if backend == "embedded" else None,
        vector_bucket=env.text("VECTOR_BUCKET") if s3 else None,
        vector_index=env.text("VECTOR_INDEX") or _default("vector_index"),
        state_bucket=env.text("STATE_BUCKET") if s3 else None,
        aws_region=env.text("AWS_REGION") or _default("aws_region"),
        aws_endpoint_url=env.text("AWS_ENDPOINT_URL"),
        knowledge_base_id=env.text("KNOWLEDGE_BASE_ID"),
        embedding_provider=provider,
        embedding_model=env.text("EMBEDDING_MODEL") or defaults.model,
        embedding_dim=env.cast("EMBEDDING_DIM", _positive_int, defaults.dim, "a positive integer"),
        embedding_base_url=base_url,
        embedding_api_key=api_key,
        recall_min_similarity=floor,
        recall_high_similarity=_high_similarity(env, defaults, floor),
        port=port,
        hosts=hosts,
        mcp_api_key=mcp_key,
        stats_flush_ms=env.cast(
            "STATS_FLUSH_MS", _positive_int, _default("stats_flush_ms"), "a positive integer"
        ),
        stats_compact_threshold=env.cast(
            "STATS_COMPACT_THRESHOLD",
            _positive_int,
            _default("stats_compact_threshold"),
            "a positive integer",
        ),
        metrics_port=env.cast(
            "METRICS_PORT", _port, _default("metrics_port"), "an integer between 1 and 65535"
        ),
        fold_interval_s=env.cast(
            "COMPACTOR_FOLD_INTERVAL_S",
            _positive_float,
            _default("fold_interval_s"),
            "a positive number of seconds",
        ),
        gc_interval_s=env.cast(
            "COMPACTOR_GC_INTERVAL_S",
            _positive_float,
            _default("gc_interval_s"),
            "a positive number of seconds",
        ),
        reconcile_interval_s=env.cast(
            "COMPACTOR_RECONCILE_INTERVAL_S",
            _positive_float,
            _default("reconcile_interval_s"),
            "a positive number of seconds",
        ),
        expire_interval_s=env.cast(
            "COMPACTOR_EXPIRE_INTERVAL_S",
            _positive_float,
            _default("expire_interval_s"),
            "a positive number of seconds",
        ),
        pg_scan_cache_mb=env.cast(
            "PG_SCAN_CACHE_MB",
            _non_negative_int,
            _default("pg_scan_cache_mb"),
            "a whole number of megabytes, 0 or more",
        ),
        storage_timeout_s=storage_timeout_s,
        tool_timeout_s=tool_timeout_s,
        ui_enabled=_ui_enabled(env, local=local, hosts=hosts, api_key=mcp_key),
        ui_port=env.cast("UI_PORT", _port, _default("ui_port"), "an integer between 1 and 65535"),
    )


__all__ = ["PROVIDER_DEFAULTS", "Backend", "Config", "Provider", "load_config"]
