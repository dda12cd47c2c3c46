"""Start and stop the memory page beside the API: same addresses, its own port (UI_PORT).

The page is an addition to the MCP server, never a reason for it not to serve: a port already
taken (a second ``--local`` server on this machine) is logged as ``ui_unavailable`` with what
to set, and the API runs on. Whether it runs at all is configuration's decision
(``shared.config``: on under ``--local`` on loopback, elsewhere only with UI_ENABLED=true and a
key); the boot log says which in ``ui_listening`` or ``ui_off``.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from aiohttp import web

from services.api.http.connections import KEEPALIVE_TIMEOUT_S, ConnectionGuard, GuardedSite
from services.api.http.host_header import loopback_names
from services.api.http.throttle import KeyThrottle
from services.api.ui.access import Access
from services.api.ui.app import UI_PATH, build_ui_app
from services.api.ui.pages import refused_page
from services.api.ui.revocation import Revocations, deployment_secret
from shared.config import Config
from shared.errors import StorageError
from shared.operations import OperationsContext
from shared.process.listen import is_loopback_only, is_unspecified, url_host
from shared.storage import ObjectStore

logger = logging.getLogger(__name__)

# A page request still running at shutdown gets this long; the API's own grace follows.
UI_SHUTDOWN_S: Final = 1.0
# The request line and any header (a Referer repeats the URL) may be this long on the page:
# a search of MAX_QUERY_CHARS characters of 4-byte UTF-8 is 12,000 bytes percent-encoded, and
# aiohttp's default of 8,190 refused one of 3-byte characters (8.9 KB) before the page saw it.
MAX_URL_BYTES: Final = 32 * 1024


def off_reason(config: Config) -> str:
    if config.backend != "embedded":
        return "set UI_ENABLED=true (with MCP_API_KEY) to serve the memory page outside --local"
    if is_loopback_only(config.server.hosts):
        return "UI_ENABLED=false"
    return (
        "HOST reaches beyond this machine and MCP_API_KEY is unset: set MCP_API_KEY to serve "
        "the memory page behind it"
    )


def page_url(addresses: list[Any], *, port: int) -> str:
    """The page's URL as a person would open it; a placeholder host on every interface."""
    if not addresses or any(is_unspecified(host) for host, *_ in addresses):
        return f"http://<host>:{port}{UI_PATH}"
    host = addresses[0][0]
    return f"http://{url_host(host)}:{port}{UI_PATH}"


async def _access(config: Config, objects: ObjectStore | None) -> Access:
    """Sessions signed with the deployment's secret and revoked in its state store, when there
    is a key (and a store); otherwise this process's own."""
    api_key = config.server.mcp_api_key
    if api_key is None or objects is None:
        return Access(api_key=api_key, revocations=Revocations(objects))
    secret = await deployment_secret(objects, api_key)
    return Access(api_key=api_key, secret=secret, revocations=Revocations(objects))


async def start_ui(
    config: Config,
    ops: OperationsContext | None,
    objects: ObjectStore | None = None,
    throttle: KeyThrottle | None = None,
) -> web.AppRunner | None:
    """The page's runner, listening; None when it is off or its port cannot be had.
    ``objects`` is the state store its sessions are shared and revoked through, ``throttle``
    the count of wrong keys it shares with ``/mcp``."""
    if not config.server.ui_enabled:
        logger.info("ui_off", extra={"detail": off_reason(config)})
        return None
    if ops is None:
        logger.info("ui_off", extra={"detail": "this runtime has no memory service"})
        return None
    if config.server.mcp_api_key is None and not is_loopback_only(config.server.hosts):
        # Configuration decided on HOST; --host may have widened it since. Never keyless there.
        logger.warning("ui_off", extra={"detail": off_reason(config)})
        return None
    try:
        access = await _access(config, objects)
    except StorageError as error:
        logger.warning(
            "ui_unavailable",
            extra={"detail": f"the memory page's session secret could not be read: {error}"},
        )
        return None
    guard = ConnectionGuard()
    app = build_ui_app(
        ops,
        access=access,
        throttle=throttle,
        host_names=loopback_names(config.server.hosts),
        guard=guard,
    )
    runner = await _listen(config, app, guard)
    if runner is not None:
        _log_listening(config, runner)
    return runner


def _log_listening(config: Config, runner: web.AppRunner) -> None:
    ipv4 = [address for address in runner.addresses if len(address) == 2]
    port = (ipv4 or runner.addresses)[0][1]
    logger.info(
        "ui_listening",
        extra={
            "url": page_url(runner.addresses, port=port),
            "port": port,
            "login": "MCP_API_KEY"
            if config.server.mcp_api_key is not None
            else "none (loopback only)",
        },
    )


async def _listen(
    config: Config, app: web.Application, guard: ConnectionGuard
) -> web.AppRunner | None:
    """The page's runner, listening on UI_PORT; None (and ``ui_unavailable``) when the port
    cannot be had."""
    runner = web.AppRunner(
        app,
        access_log=None,
        shutdown_timeout=UI_SHUTDOWN_S,
        keepalive_timeout=KEEPALIVE_TIMEOUT_S,
        max_line_size=MAX_URL_BYTES,
        max_field_size=MAX_URL_BYTES,
    )
    await runner.setup()
    site = GuardedSite(
        runner, guard, refuse=refused_page, hosts=config.server.hosts, port=config.server.ui_port
    )
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        logger.warning(
            "ui_unavailable",
            extra={
                "port": config.server.ui_port,
                "detail": f"the memory page cannot listen on port {config.server.ui_port} "
                f"({error.strerror or error}); set UI_PORT or --ui-port to another port",
            },
        )
        return None
    return runner
