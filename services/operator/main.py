"""``mcp-memory``: export, import, migrate and re-embed memories, on either backend.

Same configuration as the services (the environment, ``--local``, ``--data-dir``). ``export``
writes JSON Lines to stdout or ``--output``; ``import`` reads them from stdin or ``--input``;
``migrate`` and ``reembed`` copy from one configuration to another (``--from-env`` and
``--to-env`` name files of KEY=VALUE lines, or ``--from-local``/``--to-local``), embedding with the
target's model. Data goes to stdout only when it is the output; every log, progress and
summary line goes to stderr. The exit code is 0 on success and 1 on a refusal, which names the
line, the field or the setting. ``import`` reads its input three times, checking every line and
every ``replaced_by`` link before writing anything (stdin is spooled to a temporary file for that).
``import --from FORMAT`` converts another memory server's export first (``services.operator.
sources``; the formats in ``shared.transfer.sources``), with ``--dry-run`` to check only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

from services.operator.paths import PathRefusedError, check_paths
from services.operator.progress import Progress
from services.operator.sources import SourceArgumentsError, import_source, opened_importer
from shared.config import Config, load_config
from shared.errors import ConfigError, InvalidInputError, RefusedError, ServiceError, StorageError
from shared.model.ids import is_tenant, wall_clock_ms
from shared.process.cli import DEFAULT_DATA_DIR, add_version_argument
from shared.process.logs import configure_logging
from shared.storage import Stores, open_stores
from shared.storage.data_dir import DATA_DIR_EXIT_CODE, DataDirError, check_data_dir
from shared.transfer import (
    ExportedMemory,
    Importer,
    ImportLineError,
    ImportLinkError,
    ImportReport,
    ImportTargetError,
    encode_line,
    export_tenant,
    tenants,
)
from shared.transfer.sources import FORMATS, SourceError

PROG: Final = "mcp-memory"


class CommandRefusedError(RefusedError):
    """What the operator is told on stderr before exit 1."""


def _top_parser() -> argparse.ArgumentParser:
    # The module's first paragraph, rendered plainly: --help is no place for RST's ``marks``.
    description = " ".join(__doc__.split("\n\n")[0].replace("``", "").split())
    return argparse.ArgumentParser(
        prog=PROG,
        description=description,
        epilog=f"With --local, the data lives in {DEFAULT_DATA_DIR} unless --data-dir DIR names "
        "another folder. Each command's --help lists its flags.",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _top_parser()
    add_version_argument(parser)
    commands = parser.add_subparsers(dest="command", required=True)

    def store_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--local", action="store_true", help="the embedded PostgreSQL")
        sub.add_argument(
            "--data-dir",
            type=Path,
            help=f"the embedded data dir (with --local; default: {DEFAULT_DATA_DIR})",
        )

    def pair_options(sub: argparse.ArgumentParser) -> None:
        for side in ("from", "to"):
            sub.add_argument(f"--{side}-env", type=Path, help=f"KEY=VALUE file: the {side} side")
            sub.add_argument(f"--{side}-local", action="store_true", help="the embedded store")
            sub.add_argument(
                f"--{side}-data-dir", type=Path, help=f"its data dir (default: {DEFAULT_DATA_DIR})"
            )
        scope = sub.add_mutually_exclusive_group(required=True)
        scope.add_argument("--tenant", help="one tenant")
        scope.add_argument("--all", action="store_true", help="every tenant")

    export = commands.add_parser("export", help="memories to JSON Lines, streamed")
    store_options(export)
    scope = export.add_mutually_exclusive_group(required=True)
    scope.add_argument("--tenant", help="one tenant")
    scope.add_argument("--all", action="store_true", help="every tenant")
    export.add_argument("--output", type=Path, help="a file instead of stdout")

    imported = commands.add_parser("import", help="JSON Lines into a store, idempotent by id")
    store_options(imported)
    imported.add_argument("--tenant", help="put every memory here (default: each line's)")
    imported.add_argument("--input", type=Path, help="a file instead of stdin")
    imported.add_argument(
        "--link-updates",
        action="store_true",
        help="link each imported memory to the one it probably updates, as remember does "
        "(for another tool's data; an export of this server's carries its links)",
    )
    imported.add_argument(
        "--from",
        dest="source",
        choices=sorted(FORMATS),
        help="another memory server's export (--input FILE, or the folder for basic-memory), "
        "converted; needs --tenant",
    )
    imported.add_argument(
        "--dry-run",
        action="store_true",
        help="with --from: check and convert only, the records to stdout; nothing written",
    )

    migrate = commands.add_parser("migrate", help="copy between stores (S3 <-> PostgreSQL)")
    pair_options(migrate)
    reembed = commands.add_parser("reembed", help="copy into a fresh store with its own model")
    pair_options(reembed)
    return parser


def _env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines; blank lines and # comments skipped."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise CommandRefusedError(f"{path}: line {number} is not KEY=VALUE")
        values[key.strip()] = value.strip()
    return values


def _side(args: argparse.Namespace, side: str) -> Config:
    env_file: Path | None = getattr(args, f"{side}_env")
    local: bool = getattr(args, f"{side}_local")
    if env_file is None and not local:
        raise CommandRefusedError(f"--{side}-env FILE or --{side}-local is required")
    environ = _env_file(env_file) if env_file is not None else {}
    return load_config(environ, local=local, data_dir=getattr(args, f"{side}_data_dir"))


async def _tenants(stores: Stores, tenant: str | None) -> list[str]:
    if tenant is not None:
        if not is_tenant(tenant):
            raise CommandRefusedError(f"--tenant {tenant!r} is not a valid tenant name")
        return [tenant]
    return await tenants(stores.objects)


async def _export(stores: Stores, names: list[str], sink: TextIO, *, named: bool) -> int:
    progress = Progress("export", total=None)
    written = 0
    try:
        for tenant in names:
            records = export_tenant(stores, tenant, now_ms=wall_clock_ms(), named=named)
            async for record in records:
                sink.write(encode_line(record) + "\n")
                written += 1
                progress.advance(1)
    finally:
        progress.close()
    sink.flush()
    return written


def _numbered(stream: TextIO) -> Iterator[tuple[int, str]]:
    stream.seek(0)
    return enumerate(stream, start=1)


@contextlib.contextmanager
def _rereadable(path: Path | None) -> Iterator[TextIO]:
    """The import's input, readable more than once (links are checked before anything is
    written, then the lines are imported): the file, or stdin spooled to a temporary file."""
    # Read as UTF-8 whatever the locale, a byte that is not UTF-8 kept as a lone surrogate: the
    # import refuses its line by number rather than dying mid-read without one.
    if path is not None:
        with path.open(encoding="utf-8", errors="surrogateescape") as source:
            yield source
        return
    with tempfile.TemporaryFile("w+b") as spool:
        shutil.copyfileobj(sys.stdin.buffer, spool)
        with io.TextIOWrapper(spool, encoding="utf-8", errors="surrogateescape") as text:
            yield text


def _count_lines(source: TextIO) -> int:
    return sum(1 for _, line in _numbered(source) if line.strip())


async def _import_stream(importer: Importer, source: TextIO, *, tenant: str | None) -> ImportReport:
    progress = Progress("import", total=_count_lines(source))
    try:
        return await importer.lines(
            lambda: _numbered(source), tenant=tenant, progress=progress.advance
        )
    finally:
        progress.close()


async def _copy(
    source: Config, target: Config, *, tenant: str | None, require_empty: bool
) -> ImportReport:
    """migrate and reembed: every record of the source, imported into the target."""
    async with (
        open_stores(source) as source_stores,
        opened_importer(target, require_empty=require_empty) as importer,
    ):
        names = await _tenants(source_stores, tenant)

        async def exported() -> AsyncIterator[tuple[str, ExportedMemory]]:
            for name in names:
                records = export_tenant(
                    source_stores, name, now_ms=wall_clock_ms(), named=tenant is not None
                )
                async for record in records:
                    yield name, record

        progress = Progress("copy", total=None)
        try:
            return await importer.feed(exported(), progress=progress.advance)
        finally:
            progress.close()


async def _run(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    """The command's summary line."""
    started = time.monotonic()
    if args.command == "export":
        config = load_config(environ, local=args.local, data_dir=args.data_dir)
        async with open_stores(config) as stores:
            names = await _tenants(stores, args.tenant)
            with (
                args.output.open("w") if args.output else contextlib.nullcontext(sys.stdout)
            ) as sink:
                written = await _export(stores, names, sink, named=args.tenant is not None)
        return f"exported {written} memories of {len(names)} tenant(s)"
    if args.command == "import" and args.source is not None:
        return await import_source(args, environ)
    if args.command == "import":
        if args.dry_run:
            raise CommandRefusedError("--dry-run goes with --from FORMAT")
        config = load_config(environ, local=args.local, data_dir=args.data_dir)
        if args.tenant is not None and not is_tenant(args.tenant):
            raise CommandRefusedError(f"--tenant {args.tenant!r} is not a valid tenant name")
        async with opened_importer(config, link_updates=args.link_updates) as importer:
            with _rereadable(args.input) as source:
                report = await _import_stream(importer, source, tenant=args.tenant)
    else:
        report = await _copy(
            _side(args, "from"),
            _side(args, "to"),
            tenant=args.tenant,
            require_empty=args.command == "reembed",
        )
    seconds = time.monotonic() - started
    rate = report.imported / seconds if seconds > 0 else 0.0
    if report.imported == 0 and report.present:
        return f"nothing to do: all {report.present} memories are already there"
    return (
        f"{args.command}: {report.imported} memories written, {report.present} already there, "
        f"{seconds:.1f} s ({rate:.1f} memories/s)"
    )


def _check_data_dirs(args: argparse.Namespace) -> None:
    """Raises DataDirError for the first embedded data dir (--local's, or --from-local's and
    --to-local's) that is a file or that this user cannot create or write."""
    prefixes = ("",) if args.command in ("export", "import") else ("from_", "to_")
    for prefix in prefixes:
        if getattr(args, f"{prefix}local"):
            flag = "--" + f"{prefix}data-dir".replace("_", "-")
            check_data_dir(getattr(args, f"{prefix}data_dir"), flag=flag)


def run(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(stdout_is_protocol=True)  # stdout is the export's
    try:
        check_paths(args)  # before anything opens: a typo is not worth a database start
        _check_data_dirs(args)
        summary = asyncio.run(_run(args, os.environ))
    except DataDirError as error:
        print(error, file=sys.stderr)
        return DATA_DIR_EXIT_CODE
    except (ImportLineError, ImportLinkError, SourceError) as error:
        print(f"import refused: {error}; nothing was written", file=sys.stderr)
        return 1
    except (
        CommandRefusedError,
        SourceArgumentsError,
        PathRefusedError,
        ImportTargetError,
        ConfigError,
        InvalidInputError,
    ) as error:
        print(f"{args.command} refused: {error}", file=sys.stderr)
        return 1
    except (StorageError, ServiceError) as error:
        print(f"{args.command} failed: {error}", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


def main() -> None:
    """The ``mcp-memory`` console script."""
    sys.exit(run())
