"""``mcp-memory import --from FORMAT``: another memory server's export, converted and imported.

The conversion is read whole and screened before anything opens (a dry run stops there and
writes the converted records to stdout as this server's JSON Lines); then it goes through the
one import. The summary of what was taken and what skipped, and why, goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator, Mapping

from services.operator.progress import Progress
from shared.config import Config, load_config
from shared.embedding import open_embedder
from shared.errors import RefusedError
from shared.model.ids import is_tenant, wall_clock_ms
from shared.process.cli import process_id
from shared.storage import open_stores
from shared.transfer import Importer
from shared.transfer.sources import FORMATS, Conversion
from shared.transfer.sources.running import check, import_conversion, summary


class SourceArgumentsError(RefusedError):
    """``--from`` without what it needs."""


@contextlib.asynccontextmanager
async def opened_importer(config: Config, **options: bool) -> AsyncIterator[Importer]:
    """An importer into ``config``'s stores, embedding with its model; ``options`` are the
    Importer's (``link_updates``, ``require_empty``)."""
    async with open_stores(config) as stores, open_embedder(config) as model:
        yield Importer(stores, model, process_id=process_id(), clock_ms=wall_clock_ms, **options)


def _converted(args: argparse.Namespace) -> Conversion:
    if args.tenant is None or args.input is None:
        raise SourceArgumentsError(
            f"--from {args.source} needs --input (the export) and --tenant (its memories "
            "carry no tenant of ours)"
        )
    if not is_tenant(args.tenant):
        raise SourceArgumentsError(f"--tenant {args.tenant!r} is not a valid tenant name")
    conversion = FORMATS[args.source](args.input, args.tenant)
    check(conversion)
    return conversion


async def import_source(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    """The command's summary line; the taken/skipped lines are printed first."""
    conversion = _converted(args)
    for line in summary(conversion):
        print(f"import --from {args.source}: {line}", file=sys.stderr)
    if args.dry_run:
        for taken in conversion.taken:
            sys.stdout.write(taken.line() + "\n")
        sys.stdout.flush()
        return (
            f"dry run: {len(conversion.taken)} memories would be taken, "
            f"{len(conversion.skipped)} skipped; nothing was written"
        )
    if not conversion.taken:
        return "nothing to take: the source holds no memories this import can use"
    config = load_config(environ, local=args.local, data_dir=args.data_dir)
    async with opened_importer(config, link_updates=args.link_updates) as importer:
        progress = Progress("import", total=len(conversion.taken))
        try:
            report = await import_conversion(importer, conversion, progress=progress.advance)
        finally:
            progress.close()
    return (
        f"import --from {args.source}: {report.imported} memories written, "
        f"{report.present} already there, {len(conversion.skipped)} skipped"
    )
