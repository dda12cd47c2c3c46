"""remember: store a durable fact, unless an existing memory already says it."""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.api.tools.arguments import (
    Maybe,
    MemoryId,
    MemoryTypeChoice,
    ScopeChoice,
    Text,
    ToolArguments,
    about,
    given,
)
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.render import preview, render_remembered
from services.api.tools.structured import RememberOutput, Reply
from shared.errors import InvalidInputError
from shared.model import (
    DRAFT_FIELDS,
    MAX_CATEGORY_BYTES,
    MAX_CONTENT_BYTES,
    MAX_TAG_BYTES,
    MAX_TAGS,
    Draft,
)
from shared.operations import OperationsContext
from shared.operations.remember import remember

MIN_EXPIRY_DAYS: Final = 1
MAX_EXPIRY_DAYS: Final = 3650
_EXPIRY_RANGE: Final = f"{MIN_EXPIRY_DAYS}-{MAX_EXPIRY_DAYS}"

Tag = Annotated[str, about(max_utf8_bytes=MAX_TAG_BYTES)]


class RememberArguments(ToolArguments, frozen=True):
    content: Annotated[
        Text,
        about(
            f"The fact, self-contained, at most {MAX_CONTENT_BYTES:,} bytes.",
            max_utf8_bytes=MAX_CONTENT_BYTES,
            hint="store the essential fact",
        ),
    ]
    type: Annotated[
        MemoryTypeChoice,
        about(
            "project (default): how the project is built or decided. pattern: a reusable snippet "
            "or command. reference: an external fact or link. conversation: something the user "
            "said that should persist."
        ),
    ] = "project"
    category: Maybe[
        Annotated[
            str,
            about(
                "Optional sub-label such as decision, architecture, convention; at most "
                f"{MAX_CATEGORY_BYTES} bytes.",
                max_utf8_bytes=MAX_CATEGORY_BYTES,
            ),
        ]
    ] = UNSET
    tags: Annotated[
        tuple[Tag, ...],
        about(
            f"Optional labels: at most {MAX_TAGS}, each at most {MAX_TAG_BYTES} bytes.",
            max_entries=MAX_TAGS,
        ),
    ] = ()
    replaces: Maybe[
        Annotated[
            MemoryId,
            about(
                "Optional id of the memory this fact corrects (from recall or list_memories); "
                "that memory is retired. The fact is stored even when it resembles another."
            ),
        ]
    ] = UNSET
    expires_in_days: Maybe[
        Annotated[
            int,
            Meta(ge=MIN_EXPIRY_DAYS, le=MAX_EXPIRY_DAYS),
            about(f"Optional: forget this fact on its own after {_EXPIRY_RANGE} days."),
        ]
    ] = UNSET
    supersedes: Maybe[
        Annotated[
            bool,
            about(
                "Optional. Left out, a fact that restates an existing memory with another value "
                "(a new port, version, owner, day) is linked as its probable update: recall "
                "ranks it first and marks the older one as probably outdated. false: store it "
                "without that link, or, for a fact already stored, undo the links naming it: "
                "both stay current."
            ),
        ]
    ] = UNSET
    scope: Annotated[
        ScopeChoice,
        about(
            "project (default): shared by every conversation of the project. conversation: for "
            "this conversation only; needs the request to be in a conversation."
        ),
    ] = "project"

    def __post_init__(self) -> None:
        # Tags are stored trimmed and blank ones dropped: their limits count what is stored.
        kept = tuple(tag.strip() for tag in self.tags if tag.strip())
        msgspec.structs.force_setattr(self, "tags", kept)


def drafted(arguments: RememberArguments) -> Draft:
    """The draft the arguments file: each of its fields from the argument of its outward name
    (``type``). What is stored is what was sent, but for an optional text left blank, which is
    none (a category of spaces is no category), and one given trimmed."""
    given_values: dict[str, Any] = {}
    for field in DRAFT_FIELDS:
        value = getattr(arguments, field.outward, UNSET)
        if field.shape == "optional text" and isinstance(value, str):
            value = value.strip() or UNSET
        if not isinstance(value, UnsetType):
            given_values[field.name] = value
    return Draft(**given_values)


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: RememberArguments) -> Reply:
    if arguments.scope == "conversation" and ctx.conversation is None:
        raise InvalidInputError(
            "scope",
            f'`scope` "conversation" needs {ctx.conversation_via}, and this request is in no '
            'conversation; use scope "project" to keep it for the project',
        )
    replaces = given(arguments.replaces, "").strip() or None
    answer = await remember(
        ops,
        ctx.tenant,
        ctx.conversation,
        drafted(arguments),
        replaces=replaces,
        expires_in_days=given(arguments.expires_in_days, None),
        link_updates=arguments.supersedes is not False,
    )
    return Reply(
        text=render_remembered(answer),
        data=RememberOutput.of(
            answer.memory,
            stored=not answer.already_known,
            preview=preview(answer.memory),
            replaced=answer.replaced.id if answer.replaced is not None else None,
            supersedes=answer.supersedes.id if answer.supersedes is not None else None,
            kept=list(answer.kept),
        ),
    )


REMEMBER: Final = ToolDefinition(
    name="remember",
    description=(
        "Store a durable fact for later runs: a decision and its reason, a convention, a command "
        "that worked, something the user asked to be kept. Write it so it makes sense months "
        "from now without this conversation. A near-identical fact is not written twice: you "
        "are told which memory already says it (the tags, category and expiry you passed are "
        'then discarded). scope "conversation" keeps a note for this conversation only. When a '
        "fact has changed (a new port, version or choice), pass the old memory's id as "
        "`replaces`: the old one is retired from recall, lists and counts, and stays readable in "
        "memory_history. Without it, a fact that restates an existing memory with another value "
        "is linked as its probable update (you are told which): recall puts the newer first "
        "and marks the older as probably outdated. `expires_in_days` makes a temporary fact "
        "disappear on its own."
    ),
    arguments=RememberArguments,
    output=RememberOutput,
    handle=handle,
)
