"""A conversion through the import: screened (a dry run stops there), then imported.

The records are handed to the import as numbered JSON Lines, so every check the import makes
of its own lines is made of them; a refused line is reported by where it came from in the
source (file and line, memory, note), not by its place in the converted list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from shared.transfer.importing import Importer, ImportLineError, ImportReport, screen
from shared.transfer.sources.common import Conversion, SourceError


def _numbered(conversion: Conversion) -> Iterator[tuple[int, str]]:
    return ((n, taken.line()) for n, taken in enumerate(conversion.taken, start=1))


def _located(conversion: Conversion, error: ImportLineError) -> SourceError:
    origin = conversion.taken[error.number - 1].origin
    message = str(error).split(": ", 1)[-1]
    return SourceError(origin, error.field, message)


def check(conversion: Conversion) -> None:
    """Every record screened as the import screens its lines; nothing written.

    Raises:
        SourceError: the first record refused, named by where it came from.
    """
    try:
        screen(_numbered(conversion), tenant=conversion.tenant)
    except ImportLineError as error:
        raise _located(conversion, error) from error


async def import_conversion(
    importer: Importer,
    conversion: Conversion,
    *,
    progress: Callable[[int], None] = lambda _: None,
) -> ImportReport:
    """Raises SourceError as ``check`` does, before anything is written."""
    try:
        return await importer.lines(
            lambda: _numbered(conversion), tenant=conversion.tenant, progress=progress
        )
    except ImportLineError as error:
        raise _located(conversion, error) from error


def summary(conversion: Conversion, *, shown: int = 20) -> list[str]:
    """What was taken and what skipped, one skipped item a line (the first ``shown``)."""
    lines = [f"{len(conversion.taken)} taken, {len(conversion.skipped)} skipped"]
    for item in conversion.skipped[:shown]:
        lines.append(f"skipped {item.origin}: {item.reason}")
    if len(conversion.skipped) > shown:
        lines.append(f"… and {len(conversion.skipped) - shown} more skipped")
    return lines
