"""search_docs: the shared documentation library, offered only when KNOWLEDGE_BASE_ID is set.

Standing is shown relative to the top result and never as a raw score: a KB's scores are on its
own model's scale, and a number out of context invites the model to treat 0.4 as "weak".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

import msgspec

from services.api.answers import Reply
from services.api.structured import DOCS_OUTPUT
from services.api.tools.arguments import MAX_LIMIT, optional_limit, required_text, utf16_units
from services.api.tools.spec import ToolContext
from shared.docs import DocExcerpt
from shared.errors import InvalidInputError

NAME: Final = "search_docs"
DEFAULT_LIMIT: Final = 5
MAX_QUERY_CHARS: Final = 1_000
MAX_EXCERPT_CHARS: Final = 2_000
TRUNCATION_NOTE: Final = "… (truncated — read the source document for the rest)"
DESCRIPTION: Final = (
    "Search the shared documentation library by meaning and get excerpts with their sources. "
    "Use it when recall does not answer a question about how things are documented. An empty "
    "result means nothing close is indexed, not that the subject has no answer."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What you want to find, in natural language; max 1000 characters.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": "Max excerpts 1-50, default 5.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: Final = DOCS_OUTPUT


class SearchDocsParams(msgspec.Struct, frozen=True, kw_only=True):
    query: str
    limit: int = DEFAULT_LIMIT


class Retriever(Protocol):
    async def retrieve(self, query: str, *, limit: int) -> list[DocExcerpt]: ...


def validate(arguments: Mapping[str, Any]) -> SearchDocsParams:
    """Check the arguments before anything is sent; a refusal names the field and the limit."""
    query = required_text(arguments, "query").strip()
    # Counted as the Retrieve API counts: UTF-16 units, so an emoji is two.
    length = utf16_units(query)
    if length > MAX_QUERY_CHARS:
        raise InvalidInputError(
            "query", f"`query` is {length} characters; the limit is {MAX_QUERY_CHARS} characters"
        )
    return SearchDocsParams(query=query, limit=optional_limit(arguments, default=DEFAULT_LIMIT))


def _cut(text: str) -> str:
    if utf16_units(text) <= MAX_EXCERPT_CHARS:
        return text
    units = text.encode("utf-16-le")[: MAX_EXCERPT_CHARS * 2]
    # A cut through a surrogate pair leaves half a character: drop it rather than mangle it.
    return units.decode("utf-16-le", errors="ignore") + TRUNCATION_NOTE


def _facets(excerpt: DocExcerpt, *, top_score: float) -> str:
    facets: list[str] = []
    if excerpt.score is not None and top_score > 0:
        # floor(x + 0.5) rounds .5 up as the original's Math.round did; round() would go to even.
        facets.append(f"{math.floor(100 * excerpt.score / top_score + 0.5)}% of the top result")
    if excerpt.source:
        facets.append(f"source: {excerpt.source}")
    return f" ({', '.join(facets)})" if facets else ""


def render(query: str, excerpts: Sequence[DocExcerpt]) -> str:
    """The text the model reads."""
    if not excerpts:
        return (
            f'[DOCS] Nothing in the documentation library matched "{query}".\n'
            "An empty result means nothing close to this is indexed, which is not the same as "
            "the subject having no answer; rephrasing the query may help."
        )
    noun = "excerpt" if len(excerpts) == 1 else "excerpts"
    lines = [f'[DOCS] {len(excerpts)} {noun} matched "{query}" in the documentation library.']
    scores = [e.score for e in excerpts if e.score is not None]
    top_score = max(scores) if scores else 0.0
    for i, excerpt in enumerate(excerpts, start=1):
        lines.append("")
        lines.append(f"{i}.{_facets(excerpt, top_score=top_score)}")
        lines.append(f"   {_cut(excerpt.excerpt)}")
    return "\n".join(lines)


async def run(retriever: Retriever, params: SearchDocsParams) -> str:
    """Search and render. Raises DocsError when the knowledge base fails."""
    excerpts = await retriever.retrieve(params.query, limit=params.limit)
    return render(params.query, excerpts)


def structured(excerpts: Sequence[DocExcerpt]) -> dict[str, Any]:
    """The excerpts as the text shows them (cut at the same limit), for structuredContent."""
    scores = [e.score for e in excerpts if e.score is not None]
    top_score = max(scores) if scores else 0.0
    return {
        "excerpts": [
            {
                "text": _cut(e.excerpt),
                "source": e.source,
                "standing": (
                    math.floor(100 * e.score / top_score + 0.5)
                    if e.score is not None and top_score > 0
                    else None
                ),
                "truncated": utf16_units(e.excerpt) > MAX_EXCERPT_CHARS,
            }
            for e in excerpts
        ]
    }


async def handle(retriever: Retriever, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    """The catalogue's entry point. The library is shared: the tenant is required upstream but
    filters nothing here."""
    params = validate(arguments)
    excerpts = await retriever.retrieve(params.query, limit=params.limit)
    return Reply(text=render(params.query, excerpts), data=structured(excerpts))
