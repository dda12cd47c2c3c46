"""The page's changes, each a POST the gate has already checked (session, form token, origin):
forget, replace with a corrected text, export, and signing in and out. Each is a call to the
memory operations the tools call, then a redirect (post/redirect/get), so reloading the page that
follows repeats nothing. Lines logged name the tenant and the action, never a memory's text."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Mapping
from typing import Final
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from services.api.ui.access import Session, is_https
from services.api.ui.forms import read_form
from services.api.ui.pages import ACCESS_KEY, OPERATIONS_KEY, THROTTLE_KEY, render
from services.api.ui.query import (
    PageState,
    conversation_of,
    corrected_content,
    memory_id_of,
    tenant_of,
)
from services.api.ui.views import missing
from shared.errors import InvalidInputError
from shared.model import Draft, draft_values
from shared.operations.browse import export as exported
from shared.operations.forget import forget as forgotten
from shared.operations.history import get
from shared.operations.remember import remember
from shared.transfer import ExportedMemory, encode_line

logger = logging.getLogger(__name__)

EXPORT_LINES_PER_WRITE: Final = 200
_PRINTABLE_ASCII: Final = re.compile(r"[\x21-\x7e]+")


def _required_tenant(form: Mapping[str, str]) -> str:
    tenant = tenant_of(form)
    if tenant is None:
        raise InvalidInputError("tenant", "`tenant` is required: choose a tenant first")
    return tenant


def _required_id(form: Mapping[str, str]) -> str:
    memory_id = memory_id_of(form, "id")
    if memory_id is None:
        raise InvalidInputError("id", "`id` is required: the memory to act on")
    return memory_id


async def _form(request: web.Request) -> dict[str, str]:
    """The form's text fields (a file field has no place in any form of this page)."""
    form = await read_form(request)
    return {name: value for name, value in form.items() if isinstance(value, str)}


def _see_other(url: str) -> web.Response:
    return web.Response(status=303, headers={"Location": url})


def _with(url: str, **extra: str) -> str:
    return url + ("&" if "?" in url else "?") + urlencode(extra)


def _memory_state(values: Mapping[str, str]) -> PageState:
    """The page a form about one memory was posted from: its tenant, conversation and id."""
    return PageState(
        tenant=_required_tenant(values),
        conversation=conversation_of(values),
        memory_id=_required_id(values),
    )


async def forget(request: web.Request) -> web.StreamResponse:
    values = await _form(request)
    state = _memory_state(values)
    assert state.tenant is not None and state.memory_id is not None
    ops = request.app[OPERATIONS_KEY]
    if not await forgotten(ops, state.tenant, state.conversation, memory_id=state.memory_id):
        return missing(request, state)
    logger.info("ui_forget", extra={"tenant": state.tenant})
    listed = state.url(memory_id=None)
    return _see_other(_with(listed, forgotten=state.memory_id))


async def replace(request: web.Request) -> web.StreamResponse:
    values = await _form(request)
    state = _memory_state(values)
    assert state.tenant is not None and state.memory_id is not None
    content = corrected_content(values)
    ops = request.app[OPERATIONS_KEY]
    version = await get(ops, state.tenant, state.conversation, memory_id=state.memory_id)
    if version is None or version.memory is None:
        return missing(request, state)
    old = version.memory
    # The correction keeps what the memory was filed under; only the text changes.
    corrected = Draft(**{**draft_values(old), "content": content})
    answer = await remember(ops, state.tenant, state.conversation, corrected, replaces=old.id)
    logger.info("ui_replace", extra={"tenant": state.tenant, "alreadyKnown": answer.already_known})
    return _see_other(_with(state.url(memory_id=answer.memory.id), replaced=old.id))


async def export(request: web.Request) -> web.StreamResponse:
    """The whole tenant as JSON Lines, as ``mcp-memory export`` writes it (and ``import``
    reads it), streamed as a download."""
    values = await _form(request)
    tenant = _required_tenant(values)
    records = exported(request.app[OPERATIONS_KEY], tenant)
    try:
        first = await anext(records)
    except InvalidInputError:
        state = PageState(tenant=tenant)
        return render(
            request,
            "error.html",
            status=404,
            state=state,
            message=f"Tenant {tenant} has no memories: there is nothing to export.",
        )
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/jsonl; charset=utf-8",
            "Content-Disposition": f'attachment; filename="{tenant}-memories.jsonl"',
        }
    )
    await response.prepare(request)
    lines = 0
    async for chunk in _chunks(first, records):
        await response.write(chunk.encode())
        lines += chunk.count("\n")
    await response.write_eof()
    logger.info("ui_export", extra={"tenant": tenant, "memories": lines})
    return response


async def _chunks(first: ExportedMemory, rest: AsyncIterator[ExportedMemory]) -> AsyncIterator[str]:
    batch = [encode_line(first)]
    async for record in rest:
        batch.append(encode_line(record))
        if len(batch) >= EXPORT_LINES_PER_WRITE:
            yield "\n".join(batch) + "\n"
            batch = []
    if batch:
        yield "\n".join(batch) + "\n"


def safe_next(raw: str | None) -> str:
    """Where to go after signing in: a path of this page only, never another site (an open
    redirect would lend the page's name to a phishing link)."""
    if not raw or not _PRINTABLE_ASCII.fullmatch(raw):
        # A page's own URL is percent-encoded ASCII; CR/LF would split the Location header.
        return "/ui"
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui") or raw.startswith("//"):
        return "/ui"
    return raw


async def login(request: web.Request) -> web.StreamResponse:
    values = await _form(request)
    key = values.get("key")
    target = safe_next(values.get("next"))
    access = request.app[ACCESS_KEY]
    throttle = request.app[THROTTLE_KEY]
    # The form is read: nothing awaits between the throttle's verdict and the check, so
    # concurrent guesses from one address are counted one by one.
    client = throttle.client(request)
    retry_after = throttle.refusal(client, surface="ui")
    if retry_after is not None:
        response = render(
            request,
            "login.html",
            status=429,
            state=PageState(),
            next_url=target,
            failed=False,
            retry_after=retry_after,
        )
        response.headers["Retry-After"] = str(retry_after)
        return response
    if key is None or not access.key_matches(key):
        await throttle.failed(client, surface="ui")
        return render(
            request,
            "login.html",
            status=401,
            state=PageState(),
            next_url=target,
            failed=True,
        )
    throttle.succeeded(client)
    logger.info("ui_login", extra={"client": client})
    response = _see_other(target)
    session: Session = access.issue()
    access.set_cookie(response, session, secure=is_https(request))
    return response


async def logout(request: web.Request) -> web.StreamResponse:
    """The session ends on every process (its revocation is stored), then in this browser."""
    access = request.app[ACCESS_KEY]
    await access.revoke(request)
    logger.info("ui_logout", extra={"remote": request.remote})
    response = _see_other("/ui")
    access.close_session(response)
    return response
