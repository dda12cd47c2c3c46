"""search_docs: the shared documentation library, offered only when KNOWLEDGE_BASE_ID is set.

Standing is shown relative to the top result and never as a raw score: a KB's scores are on its
own model's scale, and a number out of context invites the model to treat 0.4 as "weak".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Final

import msgspec

from services.api.tools.arguments import (
    MAX_LIMIT,
    MIN_LIMIT,
    Limit,
    Text,
    ToolArguments,
    about,
    utf16_units,
)
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.structured import DocsExcerpt, DocsOutput, Reply
from shared.docs import DocExcerpt, KnowledgeBaseRetriever

DEFAULT_LIMIT: Final = 5
MAX_QUERY_CHARS: Final = 1_000
MAX_EXCERPT_CHARS: Final = 2_000
TRUNCATION_NOTE: Final = "… (truncated — read the source document for the rest)"


class SearchDocsArguments(ToolArguments, frozen=True):
    query: Annotated[
        Text,
        about(
            f"What you want to find, in natural language; max {MAX_QUERY_CHARS} characters.",
            # Counted as the Retrieve API counts: UTF-16 units, so an emoji is two.
            max_utf16_units=MAX_QUERY_CHARS,
        ),
    ]
    limit: Annotated[
        Limit, about(f"Max excerpts {MIN_LIMIT}-{MAX_LIMIT}, default {DEFAULT_LIMIT}.")
    ] = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        # The query is sent trimmed, so its length is counted trimmed.
        msgspec.structs.force_setattr(self, "query", self.query.strip())


def _cut(text: str) -> str:
    if utf16_units(text) <= MAX_EXCERPT_CHARS:
        return text
    units = text.encode("utf-16-le")[: MAX_EXCERPT_CHARS * 2]
    # A cut through a surrogate pair leaves half a character: drop it rather than mangle it.
    return units.decode("utf-16-le", errors="ignore") + TRUNCATION_NOTE


def _standings(excerpts: Sequence[DocExcerpt]) -> list[int | None]:
    """Each excerpt's score in percent of the top one's (None if unscored or no top above 0)."""
    top = max((e.score for e in excerpts if e.score is not None), default=0.0)
    # floor(x + 0.5) rounds .5 up as the original's Math.round did; round() would go to even.
    return [
        math.floor(100 * e.score / top + 0.5) if e.score is not None and top > 0 else None
        for e in excerpts
    ]


def _facets(excerpt: DocExcerpt, standing: int | None) -> str:
    facets: list[str] = []
    if standing is not None:
        facets.append(f"{standing}% of the top result")
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
    for i, (excerpt, standing) in enumerate(
        zip(excerpts, _standings(excerpts), strict=True), start=1
    ):
        lines.append("")
        lines.append(f"{i}.{_facets(excerpt, standing)}")
        lines.append(f"   {_cut(excerpt.excerpt)}")
    return "\n".join(lines)


def structured(excerpts: Sequence[DocExcerpt]) -> DocsOutput:
    """The excerpts as the text shows them (cut at the same limit), for structuredContent."""
    return DocsOutput(
        excerpts=[
            DocsExcerpt(
                text=_cut(e.excerpt),
                source=e.source,
                standing=standing,
                truncated=utf16_units(e.excerpt) > MAX_EXCERPT_CHARS,
            )
            for e, standing in zip(excerpts, _standings(excerpts), strict=True)
        ]
    )


async def handle(
    retriever: KnowledgeBaseRetriever, ctx: ToolContext, arguments: SearchDocsArguments
) -> Reply:
    """The library is shared: the tenant is required upstream but filters nothing here."""
    excerpts = await retriever.retrieve(arguments.query, limit=arguments.limit)
    return Reply(text=render(arguments.query, excerpts), data=structured(excerpts))


SEARCH_DOCS: Final = ToolDefinition(
    name="search_docs",
    description=(
        "Search the shared documentation library by meaning and get excerpts with their "
        "sources. Use it when recall does not answer a question about how things are "
        "documented. An empty result means nothing close is indexed, not that the subject has "
        "no answer."
    ),
    arguments=SearchDocsArguments,
    output=DocsOutput,
    handle=handle,
)
