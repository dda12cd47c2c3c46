"""Import: records into a store, idempotent by id, embedded with the configured model.

A record whose id is already stored is skipped, so a second run changes nothing and a stopped
run is resumed by running it again. The lines are read three times, and nothing is written
before the third: first each line is screened (valid UTF-8, a valid record, an id given once
per tenant) and the first refused line stops the import with its number; then every line's
``replaced_by`` links are checked against each other and the store (``shared.transfer.links``),
and a refused link stops the import; then the lines are imported in batches. A memory is written as
``remember`` writes one: its keys, its vector, then a lexicon shard for the batch; then its
replacement records, and the exported access counts of the memories new to the store are added
to the tenant's merged.json by compare-and-swap, as a fold adds a shard's (after the vectors, so
an interrupted batch may lose counts but never counts twice).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Final

import msgspec

from shared.counters.compaction import add_to_merged
from shared.embedding import Embedder
from shared.errors import ConflictError, InvalidInputError, RefusedError, StorageError
from shared.lexical.segments import LexiconShard
from shared.lexical.stored import write_lexicon_shard
from shared.memories import write_memory
from shared.model import Memory, index_prefix
from shared.model.ids import is_tenant
from shared.model.keys import RevisionKind, link_key
from shared.revisions import Replacements, read_replacements
from shared.storage import Stores
from shared.transfer.links import Line, LinkCheck
from shared.transfer.records import ExportedMemory, decode_line
from shared.transfer.updates import link_imported_updates

BATCH: Final = 64
PUT_CONCURRENCY: Final = 8
# Bodies read per request when the link check needs the stored ends of links.
GET_BATCH: Final = 100


class ImportLineError(RefusedError):
    """A line that is not a record; nothing of it was written."""

    def __init__(self, number: int, field: str, message: str) -> None:
        super().__init__(f"line {number}: {message}")
        self.number = number
        self.field = field


class ImportTargetError(RefusedError):
    """The target cannot take these memories (a different embedding width); nothing written."""


class ImportReport(msgspec.Struct, kw_only=True):
    lines: int = 0
    imported: int = 0
    present: int = 0

    def __iadd__(self, other: ImportReport) -> ImportReport:
        self.lines += other.lines
        self.imported += other.imported
        self.present += other.present
        return self


class Importer:
    """Writes records into one pair of stores, embedding with one embedder."""

    def __init__(
        self,
        stores: Stores,
        embedder: Embedder,
        *,
        process_id: str,
        clock_ms: Callable[[], int],
        require_empty: bool = False,
        link_updates: bool = False,
    ) -> None:
        """``link_updates``: link each new memory to the stored one it probably updates, as
        remember does (``shared.transfer.updates``), for data that carries no links."""
        self._link_updates = link_updates
        self._stores = stores
        self._embedder = embedder
        self._process_id = process_id
        self._clock_ms = clock_ms
        self._require_empty = require_empty
        self._checked: set[str] = set()

    async def lines(
        self,
        numbered: Callable[[], Iterable[tuple[int, str]]],
        *,
        tenant: str | None,
        progress: Callable[[int], None] = lambda _: None,
    ) -> ImportReport:
        """Import JSON Lines; ``tenant`` puts every record there, else each keeps its own.
        ``numbered`` gives the lines from the first each time it is called: they are read once
        to screen them, once for the link check, then again to import.

        Raises:
            ImportLineError: a line that is not valid UTF-8, not a valid record (a NUL in a
                text field among them), or a second line with an id already given for the
                same tenant; the first such line, found before anything is written.
            ImportLinkError: ``replaced_by`` links the import refuses (nothing written).
            ImportTargetError: the target's vectors have another width, or it is not empty when
                ``require_empty``.
        """
        _screen(numbered(), tenant=tenant)
        await self._check_links(numbered(), tenant=tenant)

        async def parsed() -> AsyncIterator[tuple[str, ExportedMemory]]:
            for number, line in numbered():
                if line.strip():
                    yield _parsed(number, line, tenant)

        return await self.feed(parsed(), progress=progress)

    async def _check_links(
        self, numbered: Iterable[tuple[int, str]], *, tenant: str | None
    ) -> None:
        """The first pass: every line's links, judged against each other and the store."""
        links = LinkCheck()
        for number, text in numbered:
            if not text.strip():
                continue
            try:
                target, record = _parsed(number, text, tenant)
            except ImportLineError:
                continue  # refused by ``_screen`` before this pass
            note_of = record.conversation if record.scope == "conversation" else None
            links.add(Line(number, target, record.id, tuple(record.replaced_by), note_of))
        stored: dict[str, Replacements] = {}
        seen: dict[tuple[str, str], str | None] = {}
        for name in links.tenants():
            stored[name] = await read_replacements(self._stores.objects, name)
            ids = links.endpoints(name, stored[name])
            for start in range(0, len(ids), GET_BATCH):
                for memory in await self._stores.vectors.get(name, ids[start : start + GET_BATCH]):
                    seen[name, memory.id] = (
                        memory.conversation if memory.scope == "conversation" else None
                    )
        links.check(stored, seen)

    async def feed(
        self,
        pairs: AsyncIterable[tuple[str, ExportedMemory]],
        *,
        progress: Callable[[int], None] = lambda _: None,
    ) -> ImportReport:
        """Import (target tenant, record) pairs in batches of ``BATCH``: what ``lines`` reads,
        or what migrate and reembed export from another store."""
        report = ImportReport()
        batch: list[tuple[str, ExportedMemory]] = []
        async for pair in pairs:
            batch.append(pair)
            if len(batch) == BATCH:
                report += await self.records(batch)
                progress(len(batch))
                batch = []
        if batch:
            report += await self.records(batch)
            progress(len(batch))
        return report

    async def records(self, batch: list[tuple[str, ExportedMemory]]) -> ImportReport:
        """One checked batch of (target tenant, record)."""
        report = ImportReport(lines=len(batch))
        by_tenant: dict[str, list[ExportedMemory]] = {}
        for target, record in batch:
            by_tenant.setdefault(target, []).append(record)
        for target, records in by_tenant.items():
            imported = await self._tenant_batch(target, records)
            report.imported += imported
            report.present += len(records) - imported
        return report

    async def _tenant_batch(self, tenant: str, records: list[ExportedMemory]) -> int:
        if self._require_empty and tenant not in self._checked:
            if await self._stores.objects.list(index_prefix(tenant), limit=1):
                raise ImportTargetError(
                    f"tenant {tenant!r} already has memories in the target: reembed writes only "
                    "into a fresh database or index"
                )
        stored = await self._stores.vectors.get(tenant, [r.id for r in records])
        present = {m.id for m in stored}
        new = [r for r in records if r.id not in present]
        if new:
            embeddings = await self._embedder.embed_many([r.content for r in new])
            await self._check_target(tenant, embeddings[0])
            memories = [r.memory(tenant) for r in new]
            await self._write(memories, embeddings)
            await write_lexicon_shard(
                self._stores.objects,
                tenant,
                LexiconShard.of(memories),
                process_id=self._process_id,
                now_ms=self._clock_ms(),
            )
        for record in records:
            links: list[tuple[str, RevisionKind]] = [(n, "replaces") for n in record.replaced_by]
            links += [(n, "supersedes") for n in record.superseded_by]
            for new_id, kind in links:
                try:
                    key = link_key(tenant, record.id, new_id, kind)
                    await self._stores.objects.put(key, "", if_none_match=True)
                except ConflictError:
                    pass  # written by an earlier run
        counts = {r.id: c for r in new if (c := r.counts()) is not None}
        if counts:
            await add_to_merged(self._stores.objects, tenant, counts)
        if new and self._link_updates:
            await link_imported_updates(
                self._stores,
                tenant,
                memories,
                embeddings,
                await read_replacements(self._stores.objects, tenant),
                now_ms=self._clock_ms(),
            )
        return len(new)

    async def _check_target(self, tenant: str, embedding: list[float]) -> None:
        """Once per tenant, before its first write: the target takes vectors of this width."""
        if tenant in self._checked:
            return
        try:
            await self._stores.vectors.query(tenant, embedding, top_k=1)
        except (StorageError, InvalidInputError) as error:
            raise ImportTargetError(
                f"tenant {tenant!r} holds vectors of another width than this model's "
                f"({len(embedding)}): re-embed into a fresh database or index instead ({error})"
            ) from error
        self._checked.add(tenant)

    async def _write(self, memories: list[Memory], embeddings: list[list[float]]) -> None:
        gate = asyncio.Semaphore(PUT_CONCURRENCY)

        async def one(memory: Memory, embedding: list[float]) -> None:
            async with gate:
                await write_memory(self._stores.objects, self._stores.vectors, memory, embedding)

        await asyncio.gather(*(one(m, e) for m, e in zip(memories, embeddings, strict=True)))


def _screen(numbered: Iterable[tuple[int, str]], *, tenant: str | None) -> None:
    """The pass before every other: each line valid UTF-8 (the operator reads bytes it cannot
    decode as lone surrogates), a valid record, and each (tenant, id) on one line only: a
    second line with an id already given would be written over the first, or beside it.

    Raises:
        ImportLineError: the first line refused, by its number; nothing has been written.
    """
    first: dict[tuple[str, str], int] = {}
    for number, text in numbered:
        try:
            text.encode()
        except UnicodeEncodeError as error:
            byte = ord(text[error.start]) - 0xDC00  # surrogateescape's mark of an undecoded byte
            raise ImportLineError(
                number,
                "line",
                f"not valid UTF-8 (byte 0x{byte & 0xFF:02x} at character "
                f"{error.start + 1}); save the file as UTF-8",
            ) from error
        if not text.strip():
            continue
        target, record = _parsed(number, text, tenant)
        earlier = first.setdefault((target, record.id), number)
        if earlier != number:
            raise ImportLineError(
                number,
                "id",
                f"`id` {record.id} is already on line {earlier} for tenant {target!r}: each "
                "memory may appear once in an import",
            )


def screen(numbered: Iterable[tuple[int, str]], *, tenant: str | None) -> None:
    """The screening pass alone, writing nothing: what a dry run of a conversion checks.

    Raises:
        ImportLineError: as ``lines`` does, for the first line refused.
    """
    _screen(numbered, tenant=tenant)


def _parsed(number: int, line: str, tenant: str | None) -> tuple[str, ExportedMemory]:
    try:
        record = decode_line(line)
    except InvalidInputError as error:
        raise ImportLineError(number, error.field, str(error)) from error
    target = tenant if tenant is not None else record.tenant
    if not is_tenant(target):
        raise ImportLineError(number, "tenant", f"`tenant` {target!r} is not a valid tenant name")
    return target, record
