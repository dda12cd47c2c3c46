"""``GET /ui``: the views, each a caller of the memory operations the tools call, so what the page
shows is what the tools would answer (visibility, ranking, history). A GET changes nothing: a
search here is read by a person, not used by a model, so it feeds no access count."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Final

from aiohttp import web

from services.api.ui.chart import chart
from services.api.ui.explain import explained
from services.api.ui.pages import OPERATIONS_KEY, render
from services.api.ui.query import PageState, memory_id_of, page_state
from shared.model import MEMORY_TYPES, wall_clock_ms
from shared.operations import OperationsContext
from shared.operations.browse import access_counts, list_page, stats, tenants
from shared.operations.history import get, history
from shared.operations.recall import recall
from shared.operations.tenant_hint import nearby_tenant
from shared.ranking import RECALL_MODES

PAGE_SIZE: Final = 25
TENANTS_SHOWN: Final = 200


async def page(request: web.Request) -> web.StreamResponse:
    """The one page, its view chosen by its URL (see ``query``)."""
    state = page_state(request.query)
    ops = request.app[OPERATIONS_KEY]
    if state.tenant is None:
        return await _tenants(request, ops)
    if state.memory_id is not None:
        return await _memory(request, ops, state)
    if state.query is not None:
        return await _search(request, ops, state)
    return await _list(request, ops, state)


def _notice(values: Mapping[str, str]) -> str | None:
    """The line a redirect after a change asks the next page to show."""
    forgotten = memory_id_of(values, "forgotten")
    if forgotten is not None:
        return f"Forgot {forgotten}: recall, list_memories and this page no longer show it."
    replaced = memory_id_of(values, "replaced")
    if replaced is not None:
        return (
            f"Stored as the correction of {replaced}, which is now retired: recall and "
            "list_memories show this one instead, and the history below shows both."
        )
    return None


async def _tenants(request: web.Request, ops: OperationsContext) -> web.StreamResponse:
    names = await tenants(ops, limit=TENANTS_SHOWN)
    return render(
        request,
        "tenants.html",
        state=PageState(),
        tenants=sorted(names),
        more=len(names) >= TENANTS_SHOWN,
    )


async def _list(
    request: web.Request, ops: OperationsContext, state: PageState
) -> web.StreamResponse:
    assert state.tenant is not None
    # The page lists as list_memories does: the same filters, pages and cursor.
    totals, listing, counts = await asyncio.gather(
        stats(ops, state.tenant, state.conversation),
        list_page(
            ops,
            state.tenant,
            state.conversation,
            match=state,
            limit=PAGE_SIZE,
            cursor=state.cursor,
        ),
        access_counts(ops, state.tenant),
    )
    memories, older = listing.memories, listing.next_cursor
    # An empty tenant may be a mistyped one: say which tenant it probably meant (--local only).
    nearby = None if memories or state.cursor else await nearby_tenant(ops, state.tenant)
    return render(
        request,
        "list.html",
        state=state,
        memories=memories,
        counts=counts,
        stats=totals,
        picture=chart(totals.created, now_ms=wall_clock_ms()),
        older_url=state.url(cursor=older) if older else None,
        newest_url=state.url(cursor=None) if state.cursor else None,
        memory_types=MEMORY_TYPES,
        notice=_notice(request.query),
        nearby=nearby,
    )


async def _search(
    request: web.Request, ops: OperationsContext, state: PageState
) -> web.StreamResponse:
    assert state.tenant is not None and state.query is not None
    answer = await recall(
        ops,
        state.tenant,
        state.conversation,
        query=state.query,
        mode=state.mode,
        limit=state.result_limit,
        count_use=False,
    )
    outcome = answer.outcome
    return render(
        request,
        "search.html",
        state=state,
        answer=answer,
        results=explained(state.query, outcome) if outcome is not None else [],
        modes=RECALL_MODES,
        floor=ops.floor,
    )


async def _memory(
    request: web.Request, ops: OperationsContext, state: PageState
) -> web.StreamResponse:
    assert state.tenant is not None and state.memory_id is not None
    version = await get(ops, state.tenant, state.conversation, memory_id=state.memory_id)
    if version is None or version.memory is None:
        return missing(request, state)
    versions, counts = await asyncio.gather(
        history(ops, state.tenant, state.conversation, memory_id=state.memory_id),
        access_counts(ops, state.tenant),
    )
    return render(
        request,
        "forget.html" if state.confirm_forget else "memory.html",
        state=state,
        version=version,
        memory=version.memory,
        versions=versions or [],
        counts=counts,
        notice=_notice(request.query),
    )


def missing(request: web.Request, state: PageState) -> web.Response:
    """One answer for every id this page cannot show: never stored, forgotten, expired, another
    conversation's note or another tenant's memory all read the same, so the page cannot be used
    to learn that an id exists elsewhere."""
    return render(request, "missing.html", status=404, state=state)
