"""What each tool returns as ``structuredContent`` beside its text: ids, dates, expiry,
confidence and what was shown, so a client that parses JSON never scrapes the prose. The text
stays what a model reads first; this carries the same facts.

One struct per answer is both: ``msgspec.to_builtins`` of it is the ``structuredContent``, and
its JSON Schema (``services.api.tools.definition``) the tool's ``outputSchema``. Fields that may be
absent are nullable rather than optional, so a record always has the same keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Self

import msgspec
from msgspec import Meta

from shared.model import DRAFT_FIELDS, Memory
from shared.operations.history import Version
from shared.ranking import Confidence


class Output(msgspec.Struct, kw_only=True):
    """The base of every tool's structured output: keyword fields, each always present."""


# The caller's fields but the text, each under its outward name (``type``), always present.
_FILED: Final = tuple(field for field in DRAFT_FIELDS if field.name != "content")


def _listed(value: Any) -> Any:
    """JSON has no tuple: a record holds what it says (``msgspec.to_builtins`` keeps tuples)."""
    return list(value) if isinstance(value, tuple) else value


if TYPE_CHECKING:
    _Facts = Output
else:
    # The record's fields in the order a reader looks for them: the id, what the memory is
    # filed under (from its declaration, ``shared.model.Draft``), its times.
    _Facts = msgspec.defstruct(
        "_Facts",
        [
            ("id", str),
            *(
                (field.outward, list[str] if field.shape == "texts" else field.annotation)
                for field in _FILED
            ),
            ("created_at", str),
            ("expires_at", str | None),
        ],
        bases=(Output,),
        module=__name__,
    )


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """What a tool handler answers: the text a model reads, and the same facts as the tool's
    outputSchema declares them: an ``Output``, ``structuredContent`` once converted."""

    text: str
    data: msgspec.Struct


class MemoryRecord(_Facts):
    """A memory's facts without its text (the text, or part of it, travels beside)."""

    length: Annotated[int, Meta(ge=0, description="characters of the text")]

    @classmethod
    def of(cls, memory: Memory, **more: Any) -> Self:
        """``memory``'s record, with the fields a subclass adds given in ``more``."""
        facts: dict[str, Any] = {"id": memory.id}
        facts |= {field.outward: _listed(getattr(memory, field.name)) for field in _FILED}
        facts |= {"created_at": memory.created_at, "expires_at": memory.expires_at}
        return cls(**facts, length=len(memory.content), **more)


class Span(Output):
    start: int
    end: int


class NewerVersion(Output):
    """A memory that probably updates another (a ``supersedes`` link), and when it was stored."""

    id: str
    created_at: str


def newer_versions(version: Version) -> list[NewerVersion]:
    return [NewerVersion(id=m.id, created_at=m.created_at) for m in version.superseded_by]


class RecallResult(MemoryRecord):
    confidence: Confidence
    standing: Annotated[int, Meta(description="percent of the top result's score")]
    matched: list[str]
    text: Annotated[str, Meta(description="the memory, or the excerpt shown of it")]
    excerpt: Annotated[
        Span | None,
        Meta(description="characters [start, end) shown, or null when shown whole"),
    ]
    superseded_by: Annotated[
        list[NewerVersion],
        Meta(description="results that probably update this one: it is probably outdated"),
    ]
    supersedes: Annotated[list[str], Meta(description="results this one probably updates")]


class RecallOutput(Output):
    """Filled in as the answer is rendered, so it says what the text shows."""

    mode: str
    confidence: Literal["high", "medium", "low", "none"]
    compared: Annotated[
        int, Meta(description="memories this request may see that either leg brought up")
    ]
    results: list[RecallResult]
    left_out: Annotated[int, Meta(description="results left out to fit max_tokens")]
    left_out_chars: int
    max_tokens: int


class RememberOutput(MemoryRecord):
    stored: Annotated[bool, Meta(description="false: an existing memory already said it")]
    preview: str
    replaced: str | None
    supersedes: Annotated[
        str | None,
        Meta(description="the memory this one probably updates: linked, ranked below it"),
    ]
    kept: Annotated[list[str], Meta(description="memories whose links to this one were undone")]


class ListedMemory(MemoryRecord):
    preview: str


class ListOutput(Output):
    memories: list[ListedMemory]
    next_cursor: Annotated[
        str | None,
        Meta(
            description="pass as `cursor`, with the same filters, for the next page; "
            "null when no more memories match"
        ),
    ]


class ForgetOutput(Output):
    deleted: int
    matched: Annotated[int, Meta(description="memories the id or filter selects")]
    remaining: int
    confirmed: bool


class StatsOutput(Output):
    total: int
    by_type: dict[str, int]
    lower_bound: bool


class VersionRecord(Output):
    id: str
    status: Literal["current", "replaced", "expired", "forgotten"]
    replaced_by: list[str]
    memory: MemoryRecord | None
    superseded_by: Annotated[
        list[NewerVersion], Meta(description="memories that probably update this one")
    ]
    supersedes: Annotated[list[str], Meta(description="memories this one probably updates")]

    @classmethod
    def of(cls, version: Version) -> VersionRecord:
        memory = version.memory
        if memory is None:
            status: Literal["current", "replaced", "expired", "forgotten"] = "forgotten"
        elif version.expired:
            status = "expired"
        elif version.replaced_by:
            status = "replaced"
        else:
            status = "current"
        record = MemoryRecord.of(memory) if memory is not None else None
        return cls(
            id=version.memory_id,
            status=status,
            replaced_by=list(version.replaced_by),
            memory=record,
            superseded_by=newer_versions(version),
            supersedes=[m.id for m in version.supersedes],
        )


class HistoryOutput(Output):
    id: str
    found: bool
    versions: list[VersionRecord]

    @classmethod
    def of(cls, memory_id: str, versions: Sequence[Version] | None) -> HistoryOutput:
        shown = [VersionRecord.of(v) for v in versions or ()]
        return cls(id=memory_id, found=versions is not None, versions=shown)


class GetOutput(Output):
    id: str
    found: bool
    memory: MemoryRecord | None
    text: str | None
    replaced_by: list[str]
    superseded_by: Annotated[
        list[NewerVersion], Meta(description="memories that probably update this one")
    ]
    supersedes: Annotated[list[str], Meta(description="memories this one probably updates")]

    @classmethod
    def of(cls, memory_id: str, version: Version | None) -> GetOutput:
        memory = version.memory if version is not None else None
        return cls(
            id=memory_id,
            found=memory is not None,
            memory=MemoryRecord.of(memory) if memory is not None else None,
            text=memory.content if memory is not None else None,
            replaced_by=list(version.replaced_by) if version is not None else [],
            superseded_by=newer_versions(version) if version is not None else [],
            supersedes=[m.id for m in version.supersedes] if version is not None else [],
        )


class DocsExcerpt(Output):
    text: str
    source: str | None
    standing: int | None
    truncated: bool


class DocsOutput(Output):
    excerpts: list[DocsExcerpt]
