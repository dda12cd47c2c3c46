"""What the caller of remember decides about a memory, declared once: ``Draft``.

Its fields are the caller's (the text, its type, category, tags and scope); everything else a
memory holds is the system's (id, tenant, conversation, times, trust). A field's limits are its
``Meta`` (``limited``), and the name it goes by outside (a tool argument, an export line, a
structured output) is its msgspec name. The metadata codec, the export line, the structured
output, the renderers and the page's correction are read from these fields, so a plain new
field is declared here, taken by the remember tool and shown by the page's template: three
places (docs/architecture.md, "Adding a field").
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, NamedTuple, TypedDict, Unpack, cast

import msgspec
import msgspec.inspect as mi
from msgspec import Meta

from shared.errors import InvalidInputError, InvariantError

MemoryType = Literal["project", "pattern", "reference", "conversation"]
Scope = Literal["project", "conversation"]

MEMORY_TYPES: Final[tuple[MemoryType, ...]] = ("project", "pattern", "reference", "conversation")
SCOPES: Final[tuple[Scope, ...]] = ("project", "conversation")

# Bytes, as the vector store's metadata budget counts them (docs/s3.md).
MAX_CONTENT_BYTES: Final = 32_000
MAX_CATEGORY_BYTES: Final = 128
MAX_TAGS: Final = 20
MAX_TAG_BYTES: Final = 64


class Limits(TypedDict, total=False):
    """What a field's ``Meta.extra`` may ask; the remember tool's arguments ask the same checks
    (``services.api.tools.arguments.Checks`` extends these)."""

    non_blank: bool  # a string with something besides white space
    max_utf8_bytes: int  # a string's size as stored; on a tuple's entries, each entry's
    max_entries: int  # a tuple's length


def limited(**limits: Unpack[Limits]) -> Meta:
    """A field's limits: ``Annotated[str, limited(max_utf8_bytes=128)]``."""
    return Meta(extra=dict(limits))


Tag = Annotated[str, limited(max_utf8_bytes=MAX_TAG_BYTES)]


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """A memory as its caller files it: the fields remember takes, with their limits.

    Attributes:
        content: the fact itself, exactly as the caller sent it.
        memory_type: what kind of fact it is (``type`` outside); only the trust half-life
            depends on it.
        category: an optional free-form sub-label.
        tags: optional labels, stored as given after trimming.
        scope: "conversation" when only the conversation it was written from may see it,
            else "project".
    """

    content: Annotated[str, limited(non_blank=True, max_utf8_bytes=MAX_CONTENT_BYTES)]
    memory_type: MemoryType = msgspec.field(default="project", name="type")
    category: Annotated[str, limited(max_utf8_bytes=MAX_CATEGORY_BYTES)] | None = None
    tags: Annotated[tuple[Tag, ...], limited(max_entries=MAX_TAGS)] = ()
    scope: Scope = "project"


Shape = Literal["text", "optional text", "texts", "choice", "other"]


class DraftField(NamedTuple):
    """One field of a draft as its readers need it, worked out once from its declaration.

    Attributes:
        name: the attribute (``memory_type``).
        outward: its name outside: tool argument, export line, structured output (``type``).
        annotation: its declared type, limits and all.
        shape: what kind of value it holds, which says how a tolerant reader takes it back.
        default: its value when the caller gives none (``msgspec.NODEFAULT`` when required).
        choices: a Literal's values; empty for any other shape.
        limits: the field's own limits (a string's, or a tuple's length).
        entry_limits: the limits of each entry of a tuple.
    """

    name: str
    outward: str
    annotation: Any
    shape: Shape
    default: Any
    choices: tuple[str, ...]
    limits: Limits
    entry_limits: Limits


def _limits(info: mi.Type) -> tuple[mi.Type, Limits]:
    if isinstance(info, mi.Metadata):
        return info.type, cast(Limits, dict(info.extra or {}))
    return info, Limits()


def _shape(info: mi.Type) -> tuple[Shape, mi.Type]:
    """The field's shape, and the type its limits hang on (the string of an optional one)."""
    if isinstance(info, mi.UnionType):
        present = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(present) == 1 and isinstance(_limits(present[0])[0], mi.StrType):
            return "optional text", present[0]
        return "other", info
    bare = _limits(info)[0]
    if isinstance(bare, mi.StrType):
        return "text", info
    if isinstance(bare, mi.LiteralType):
        return "choice", info
    if isinstance(bare, mi.VarTupleType) and isinstance(_limits(bare.item_type)[0], mi.StrType):
        return "texts", info
    return "other", info


def described(draft: type[Draft]) -> tuple[DraftField, ...]:
    """The fields of ``draft`` (``Draft``, or a struct extending it), in declaration order."""
    info = mi.type_info(draft)
    if not isinstance(info, mi.StructType):
        raise InvariantError(f"{draft.__name__} is not a struct")
    annotations = {field.name: field.type for field in msgspec.structs.fields(draft)}
    fields = []
    for field in info.fields:
        shape, limited_type = _shape(field.type)
        bare, limits = _limits(limited_type)
        entry_limits = _limits(bare.item_type)[1] if isinstance(bare, mi.VarTupleType) else Limits()
        choices = tuple(str(v) for v in bare.values) if isinstance(bare, mi.LiteralType) else ()
        default = field.default if field.required is False else msgspec.NODEFAULT
        fields.append(
            DraftField(
                name=field.name,
                outward=field.encode_name,
                annotation=annotations[field.name],
                shape=shape,
                default=default,
                choices=choices,
                limits=limits,
                entry_limits=entry_limits,
            )
        )
    return tuple(fields)


DRAFT_FIELDS: Final = described(Draft)


def draft_values(draft: Draft) -> dict[str, Any]:
    """A draft's fields by attribute name (of a memory too: it extends the draft)."""
    return {name: getattr(draft, name) for name in Draft.__struct_fields__}


def texts_of(draft: Draft) -> list[tuple[str, str]]:
    """Every string a draft holds, each with the outward name of its field."""
    texts: list[tuple[str, str]] = []
    for field in DRAFT_FIELDS:
        value = getattr(draft, field.name)
        if field.shape in ("text", "optional text") and value is not None:
            texts.append((field.outward, value))
        elif field.shape == "texts":
            texts.extend((field.outward, entry) for entry in value)
    return texts


def check_limits(draft: Draft) -> None:
    """Refuse, naming the field and its limit, a value over what its declaration allows: what
    an import checks of each line (the remember tool checks its arguments the same way).

    Raises:
        InvalidInputError: the first field, in declaration order, over a limit.
    """
    for field in DRAFT_FIELDS:
        value = getattr(draft, field.name)
        if value is None:
            continue
        name, limits = field.outward, field.limits
        if limits.get("non_blank") and not value.strip():
            raise InvalidInputError(name, f"`{name}` must be a non-empty string")
        most = limits.get("max_utf8_bytes")
        if most is not None and len(value.encode()) > most:
            raise InvalidInputError(name, f"`{name}` may be at most {most} bytes")
        if field.shape == "texts":
            _check_entries(field, value)


def _check_entries(field: DraftField, entries: tuple[str, ...]) -> None:
    most = field.limits.get("max_entries")
    each = field.entry_limits.get("max_utf8_bytes")
    too_many = most is not None and len(entries) > most
    too_long = each is not None and any(len(entry.encode()) > each for entry in entries)
    if too_many or too_long:
        name = field.outward
        entries_said = f"at most {most} entries" if most is not None else "entries"
        size_said = f" of {each} bytes" if each is not None else ""
        raise InvalidInputError(name, f"`{name}` may hold {entries_said}{size_said}")
