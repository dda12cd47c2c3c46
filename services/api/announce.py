"""What the API tells a person at start-up: the banner on a terminal, and the notice about an
open server (no MCP_API_KEY) worded for where it actually runs.

The banner is a few plain lines on stderr, printed once both listeners are up, so every URL in
it is one the process holds (the bound ports, under ``--port 0`` too; the address it listens
on). It is printed only when the log is text (``shared.process.logs.text_wanted``): never in
``--stdio`` mode, and never into a pipe or a pod's log, which keep their JSON lines.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any, Final, TextIO

from services.api.ui.app import UI_PATH
from services.api.ui.site import off_reason
from shared.config import Config
from shared.process.listen import is_loopback_only, is_unspecified, url_host

TENANT_HEADER: Final = "X-Memory-Tenant"

_CLUSTER_OPEN: Final = (
    "MCP_API_KEY is unset: this server answers any caller that can reach it; set MCP_API_KEY "
    "before routing anything to it from outside the cluster"
)


def bound_port(addresses: Sequence[Any], *, default: int) -> int:
    """The port a listener holds: the IPv4 socket's (a 2-tuple) where there is one; with
    ``--port 0`` each socket gets its own."""
    ipv4 = [address for address in addresses if len(address) == 2]
    found = ipv4 or list(addresses)
    return int(found[0][1]) if found else default


def shown_host(addresses: Sequence[Any]) -> str:
    """The host a person on this machine types: the listening address itself, or loopback when
    the process listens on every interface; in URL form (an IPv6 address in brackets)."""
    hosts = [str(address[0]) for address in addresses]
    if not hosts or "0.0.0.0" in hosts:
        return "127.0.0.1"
    return "[::1]" if is_unspecified(hosts[0]) else url_host(hosts[0])


def open_auth_notice(config: Config, *, port: int) -> tuple[int, str]:
    """The level and wording of the ``auth`` line of a server without a key.

    On loopback only, nothing but this machine reaches it: that is the designed ``--local``
    default, said as it is (info). A ``--local`` server opened to the network is told what that
    exposes. Anywhere else it is a cluster's server, and keeps the cluster's wording.
    """
    hosts = config.server.hosts
    where = ", ".join(hosts)
    if is_loopback_only(hosts):
        return logging.INFO, (
            f"MCP_API_KEY is unset: this server listens on {where} only, so programs on this "
            "machine can call it without a key and nothing else can reach it; set MCP_API_KEY "
            "before opening it to the network with HOST or --host"
        )
    if config.backend == "embedded":
        return logging.WARNING, (
            f"MCP_API_KEY is unset and this server listens on {where}: anyone on the network "
            f"who reaches port {port} can read and write its memories; set MCP_API_KEY, or "
            "drop HOST and --host to listen on 127.0.0.1 only"
        )
    return logging.WARNING, _CLUSTER_OPEN


def page_text(config: Config, *, addresses: Sequence[Any] | None, has_page: bool) -> str:
    """The banner's memory page: its URL when it listens (``addresses``), else why not.
    ``has_page``: the runtime has a memory service to show."""
    if addresses is not None:
        port = bound_port(addresses, default=config.server.ui_port)
        return f"http://{shown_host(addresses)}:{port}{UI_PATH}"
    if not config.server.ui_enabled:
        return f"off: {off_reason(config)}"
    if not has_page:
        return "off: this runtime has no memory service"
    return "not served (the warning above says why)"


def _access_line(config: Config) -> str:
    if config.server.mcp_api_key is not None:
        return "a key: send Authorization: Bearer <MCP_API_KEY> to /mcp"
    if is_loopback_only(config.server.hosts):
        return "no key; only this machine can connect"
    return "no key, and reachable from the network (see the warning above)"


def banner_lines(
    config: Config,
    *,
    version: str,
    mcp_addresses: Sequence[Any],
    page: str,
    boot_lines: Sequence[str] = (),
) -> list[str]:
    """The banner: where to connect, the header, the page (its URL, or why there is none),
    where the data is, and how to stop. ``page`` is a URL or a sentence."""
    port = bound_port(mcp_addresses, default=config.server.port)
    mcp_url = f"http://{shown_host(mcp_addresses)}:{port}/mcp"
    everywhere = any(is_unspecified(str(address[0])) for address in mcp_addresses)
    lines = [
        f"mcp-memory {version} is ready.",
        f"  MCP endpoint:  {mcp_url}  (Streamable HTTP: POST JSON-RPC)",
    ]
    if everywhere:
        lines.append(
            "                 (every interface: from elsewhere, this machine's name or address)"
        )
    lines += [
        f"  send header:   {TENANT_HEADER}: <your-project>  (which project's memories a call uses)",
        f"  access:        {_access_line(config)}",
        f"  memory page:   {page}",
    ]
    if config.backend == "embedded" and config.postgres.data_dir is not None:
        lines.append(f"  data dir:      {config.postgres.data_dir}")
    elif boot_lines:
        lines.append(f"  storage:       {boot_lines[0]}")
    lines.append(
        "Stop it with Ctrl-C (or SIGTERM): calls in flight finish first. Log lines follow; "
        "LOG_FORMAT=json logs JSON lines instead."
    )
    return lines


def print_banner(lines: Sequence[str], stream: TextIO | None = None) -> None:
    """The banner on stderr, in one write, flushed (a terminal may be line-buffered or not)."""
    out = stream or sys.stderr
    out.write("\n".join(lines) + "\n")
    out.flush()
