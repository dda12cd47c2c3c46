"""Dependencies point one way (house style rule 1), checked on the real import graph."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imports_of(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def modules_under(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def offending(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in modules_under(folder)
        for name in imports_of(path)
        if name in forbidden or name.startswith(tuple(f"{module}." for module in forbidden))
    ]


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("shared", ("services",)),
        ("services/api", ("services.compactor",)),
        ("services/compactor", ("services.api",)),
        # The services see storage through its interfaces only; a backend is opened by the
        # factory, so a process loads only the driver its configuration names.
        (
            "services",
            ("shared.storage.postgres", "shared.storage.s3", "asyncpg", "aiobotocore", "botocore"),
        ),
        (
            "shared/model",
            (
                "shared.storage",
                "shared.counters",
                "shared.embedding",
                "asyncpg",
                "aiobotocore",
                "aiohttp",
            ),
        ),
        (
            "shared/ranking",
            ("shared.storage", "shared.counters", "asyncpg", "aiobotocore", "aiohttp"),
        ),
        (
            "shared/counters",
            (
                "shared.storage.postgres",
                "shared.storage.s3",
                "asyncpg",
                "aiobotocore",
                "prometheus_client",
            ),
        ),
        (
            "shared/lexical",
            (
                "shared.storage.postgres",
                "shared.storage.s3",
                "shared.embedding",
                "asyncpg",
                "aiobotocore",
                "prometheus_client",
            ),
        ),
        ("shared/embedding", ("shared.storage", "asyncpg")),
        # The operations know no transport: the tools and the page word what they answer.
        ("shared/operations", ("aiohttp", "mcp", "prometheus_client", "asyncpg", "aiobotocore")),
        ("shared/storage/postgres", ("shared.storage.s3", "aiobotocore", "botocore")),
        ("shared/storage/s3", ("shared.storage.postgres", "asyncpg", "pgvector")),
        ("services/api/tools", ("aiohttp",)),
    ],
)
def test_layer_does_not_import(folder: str, forbidden: tuple[str, ...]) -> None:
    assert offending(folder, forbidden) == []


def test_the_benchmarks_call_the_operations_not_the_transport() -> None:
    """bench/ stores and recalls through shared.operations. Only the transport's own benchmarks
    build the HTTP application (around a stand-in tool), and the in-process step timer
    (bench/_steps.py) times the recall tool's prose, the tool whole and the server's MCP framing
    of its answer (bench/_framing.py) as steps of their own. The first-answer bench stops the
    stdio resident between its cold runs (bench/_first_answer.py)."""
    transport = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in modules_under("bench")
        for name in imports_of(path)
        if name == "services" or name.startswith("services.")
    }
    assert transport == {
        "bench/_first_answer.py imports services.api.stdio.sharing",
        "bench/_framing.py imports services.api.http.mcp_transport",
        "bench/_framing.py imports services.api.tools.definition",
        "bench/_speed.py imports services.api.http.app",
        "bench/_steps.py imports services.api.tools.catalogue",
        "bench/_steps.py imports services.api.tools.definition",
        "bench/_steps.py imports services.api.tools.recall",
        "bench/_steps.py imports services.api.tools.recall_text",
        "bench/bench_transport.py imports services.api.http.app",
        "bench/bench_transport.py imports services.api.tools.arguments",
        "bench/bench_transport.py imports services.api.tools.catalogue",
        "bench/bench_transport.py imports services.api.tools.definition",
        "bench/bench_transport.py imports services.api.tools.structured",
    }


def test_only_the_storage_factory_names_a_backend() -> None:
    """A process loads only the driver its configuration names: outside the backends
    themselves, shared/storage/factory.py is the one module that imports one."""
    backends = ("shared.storage.postgres", "shared.storage.s3")
    namers = {
        str(path.relative_to(ROOT))
        for folder in ("shared", "services")
        for path in modules_under(folder)
        if not str(path.relative_to(ROOT)).startswith(
            ("shared/storage/postgres/", "shared/storage/s3/")
        )
        and any(
            name == b or name.startswith(f"{b}.") for name in imports_of(path) for b in backends
        )
    }
    assert namers == {"shared/storage/factory.py"}


def test_the_vector_store_interface_is_its_contract() -> None:
    """put, query, get, delete, and the reconciler's scan_ids: what a backend does faster it does
    inside them, in a store the factory composes (PostgreSQL's snapshots), never as a hook on the
    interface that every backend must stub."""
    from shared.storage import VectorStore

    methods = {
        name
        for name, value in vars(VectorStore).items()
        if callable(value) and not name.startswith("_")
    }
    assert methods == {"put", "query", "get", "delete", "scan_ids"}
    assert VectorStore.__abstractmethods__ == methods


def test_only_the_schedule_module_imports_apscheduler() -> None:
    users = [
        str(path.relative_to(ROOT))
        for folder in ("shared", "services")
        for path in modules_under(folder)
        if any(name.startswith("apscheduler") for name in imports_of(path))
    ]
    assert users == ["services/compactor/schedule.py"]


def test_only_config_reads_the_environment_for_settings() -> None:
    readers = [
        str(path.relative_to(ROOT))
        for folder in ("shared", "services")
        for path in modules_under(folder)
        if "os.environ" in path.read_text() or "os.getenv" in path.read_text()
    ]
    # main modules (the stdio resident is a process of its own) hand os.environ to load_config;
    # cli reads HOSTNAME for the process id.
    allowed = {
        "shared/config.py",
        "services/api/main.py",
        "services/api/stdio/resident.py",
        "services/compactor/main.py",
        "services/operator/main.py",
        "shared/process/cli.py",
    }
    assert set(readers) <= allowed, sorted(set(readers) - allowed)


def test_every_exception_the_package_defines_descends_from_service_error() -> None:
    """One exception tree (shared/errors.py): a caller catching ServiceError, or one of its
    branches, never misses an error the package raises on purpose."""
    import importlib
    import pkgutil

    from shared.errors import ServiceError

    for package in ("shared", "services"):
        for module in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)

    def every_subclass(cls: type[BaseException]) -> Iterator[type[BaseException]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from every_subclass(sub)

    ours = {
        cls
        for cls in every_subclass(Exception)
        if cls.__module__.split(".")[0] in ("shared", "services")
    }
    assert ServiceError in ours and len(ours) > 10  # the walk really imported the package
    outside = sorted(
        f"{c.__module__}.{c.__qualname__}" for c in ours if not issubclass(c, ServiceError)
    )
    assert outside == []


MODULE_LINES = 400
FUNCTION_LINES = 60


def package_modules() -> list[Path]:
    return modules_under("shared") + modules_under("services")


def test_no_module_is_longer_than_a_newcomer_reads_at_once() -> None:
    """Issue 30's limit: a module over 400 lines is doing more than one job."""
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in package_modules()
        if (lines := len(path.read_text().splitlines())) > MODULE_LINES
    ]
    assert long == []


def test_no_function_is_longer_than_sixty_lines() -> None:
    """Issue 30's limit: a longer function hides a step that deserves a name."""
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines"
        for path in package_modules()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := (node.end_lineno or node.lineno) - node.lineno + 1) > FUNCTION_LINES
    ]
    assert long == []


def declares_all(path: Path) -> bool:
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in ast.parse(path.read_text(), filename=str(path)).body
    )


def test_only_package_roots_declare_their_public_names() -> None:
    """House style rule 4: a package's ``__init__`` lists its public names in ``__all__``; a
    module inside it keeps internals underscored and is imported from where a name is defined."""
    leaves = [
        str(path.relative_to(ROOT))
        for path in package_modules()
        if path.name != "__init__.py" and declares_all(path)
    ]
    assert leaves == []
