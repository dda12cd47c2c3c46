"""recall: search the project's memory by meaning and by keyword."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import Reply
from services.api.render import render_recall
from services.api.service import MemoryService
from services.api.structured import RECALL_OUTPUT
from services.api.tools.arguments import (
    MAX_LIMIT,
    optional,
    optional_choice,
    optional_limit,
    required_text,
)
from services.api.tools.spec import ToolContext
from shared.errors import InvalidInputError
from shared.ranking import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES

NAME: Final = "recall"
# The largest answer budget: about one 32,000-byte memory and then some.
MAX_TOKENS_CEILING: Final = 16_000
DESCRIPTION: Final = (
    "Search this project's long-term memory by meaning and by keyword: a question in plain "
    "words, or an exact name such as an error code, a file path, a flag or a ticket id. Call it "
    "at the start of a task, before asking the user to re-explain anything: decisions, "
    "conventions and commands that worked may already be stored. Returns the memories "
    "themselves, ranked, with a confidence level and the words each keyword match matched. An "
    "empty result means nothing is stored on the subject, not that the subject has no answer. "
    "Includes the project's memories plus this conversation's own notes, never other "
    "conversations' notes."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": (
                "What you want to know, in natural language; exact names (E1042, "
                "src/app/main.py, --local) are matched as written."
            ),
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": "Max memories, 1-50; defaults to the mode's own limit (3, 5 or 10).",
        },
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "description": (
                "Optional budget for the whole answer, in tokens counted as characters / 4: "
                "results are kept in rank order while they fit (the first always, cut to fit) "
                "and the answer says what was left out. Defaults: precision 1000, balanced "
                f"2000, exploratory 4000; at most {MAX_TOKENS_CEILING} (larger is clamped)."
            ),
        },
        "mode": {
            "type": "string",
            "enum": list(RECALL_MODES),
            "description": (
                "precision: few, closely matching results. balanced (default): the usual "
                "trade-off. exploratory: more results on looser matching; use it when a "
                "balanced search found nothing."
            ),
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: Final = RECALL_OUTPUT


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    query = required_text(arguments, "query")
    mode = optional_choice(arguments, "mode", RECALL_MODES, default=DEFAULT_MODE) or DEFAULT_MODE
    limit = optional_limit(arguments, default=MODE_PROFILES[mode].limit)
    budget = token_budget(arguments, default=MODE_PROFILES[mode].max_tokens)
    answer = await service.recall(ctx.tenant, ctx.conversation, query=query, mode=mode, limit=limit)
    return render_recall(query, answer, max_tokens=budget)


def token_budget(arguments: Mapping[str, Any], *, default: int) -> int:
    """``max_tokens``: an integer of at least 1 (refused by name otherwise), clamped to the
    ceiling; the mode's default when absent."""
    value = optional(arguments, "max_tokens")
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(
            "max_tokens",
            f"`max_tokens` must be an integer of at least 1 (at most {MAX_TOKENS_CEILING} is used)",
        )
    return min(value, MAX_TOKENS_CEILING)
