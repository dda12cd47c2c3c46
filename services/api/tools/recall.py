"""recall: search the project's memory by meaning and by keyword."""

from __future__ import annotations

from typing import Annotated, Final

from msgspec import UNSET, Meta

from services.api.tools.arguments import (
    MAX_LIMIT,
    MIN_LIMIT,
    Limit,
    Maybe,
    RecallModeChoice,
    Text,
    ToolArguments,
    about,
    either,
    given,
)
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.mistyped import mistyped_tenant
from services.api.tools.recall_text import render_recall
from services.api.tools.structured import RecallOutput, Reply
from shared.operations import OperationsContext
from shared.operations.recall import recall
from shared.ranking import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES

# The largest answer budget: about one 32,000-byte memory and then some.
MAX_TOKENS_CEILING: Final = 16_000
_MODE_LIMITS: Final = either([MODE_PROFILES[mode].limit for mode in RECALL_MODES])
_MODE_BUDGETS: Final = ", ".join(
    f"{mode} {MODE_PROFILES[mode].max_tokens}" for mode in RECALL_MODES
)


class RecallArguments(ToolArguments, frozen=True):
    query: Annotated[
        Text,
        about(
            "What you want to know, in natural language; exact names (E1042, src/app/main.py, "
            "--local) are matched as written."
        ),
    ]
    limit: Maybe[
        Annotated[
            Limit,
            about(
                f"Max memories, {MIN_LIMIT}-{MAX_LIMIT}; defaults to the mode's own limit "
                f"({_MODE_LIMITS})."
            ),
        ]
    ] = UNSET
    max_tokens: Maybe[
        Annotated[
            int,
            Meta(ge=1),
            about(
                "Optional budget for the whole answer, in tokens counted as characters / 4: "
                "results are kept in rank order while they fit (the first always, cut to fit) "
                f"and the answer says what was left out. Defaults: {_MODE_BUDGETS}; at most "
                f"{MAX_TOKENS_CEILING} (larger is clamped).",
                hint=f"a larger one is clamped to {MAX_TOKENS_CEILING}",
            ),
        ]
    ] = UNSET
    mode: Annotated[
        RecallModeChoice,
        about(
            "precision: few, closely matching results. balanced (default): the usual trade-off. "
            "exploratory: more results on looser matching; use it when a balanced search found "
            "nothing."
        ),
    ] = DEFAULT_MODE


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: RecallArguments) -> Reply:
    profile = MODE_PROFILES[arguments.mode]
    query = arguments.query
    limit = given(arguments.limit, profile.limit)
    answer = await recall(
        ops, ctx.tenant, ctx.conversation, query=query, mode=arguments.mode, limit=limit
    )
    budget = min(given(arguments.max_tokens, profile.max_tokens), MAX_TOKENS_CEILING)
    # No candidate at all: the tenant may be empty because its name was mistyped.
    hint = await mistyped_tenant(ops, ctx) if answer.outcome is None else ""
    return render_recall(query, answer, max_tokens=budget, hint=hint)


RECALL: Final = ToolDefinition(
    name="recall",
    description=(
        "Search this project's long-term memory by meaning and by keyword: a question in plain "
        "words, or an exact name such as an error code, a file path, a flag or a ticket id. Call "
        "it at the start of a task, before asking the user to re-explain anything: decisions, "
        "conventions and commands that worked may already be stored. Returns the memories "
        "themselves, ranked, with a confidence level and the words each keyword match matched. "
        "An empty result means nothing is stored on the subject, not that the subject has no "
        "answer. A memory marked PROBABLY OUTDATED has a newer version directly above it: "
        "prefer the newer. Includes the project's memories plus this conversation's own notes, "
        "never other conversations' notes."
    ),
    arguments=RecallArguments,
    output=RecallOutput,
    handle=handle,
)
