"""The Host gate of a loopback listener: protection against DNS rebinding.

A page on evil.example can make its own name resolve to 127.0.0.1 once it has loaded; the
browser then sends that page's requests to this port, still saying ``Host: evil.example``. So a
server only this machine can reach answers only requests addressed to a loopback name, as the
MCP specification asks of local servers. A server listening on the network (``HOST`` set, or a
pod) is addressed by whatever name reaches it, so there is no list to check; the Origin gate and
the bearer key stand there.
"""

from __future__ import annotations

import re
from typing import Final

from aiohttp import web
from multidict import CIMultiDictProxy

from services.api.http.mcp_transport import jsonrpc_error
from shared.process.listen import is_loopback_only, url_host

HOST_NOT_LOOPBACK_CODE: Final = -32004
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})

# A Host value: a bracketed IPv6 literal or a name without colons, then an optional :port.
_HOST_VALUE: Final = re.compile(r"(\[[^\]]*\]|[^:\[\]]*)(?::[0-9]*)?")
# How much of a refused value the error quotes: enough to recognise, not a reflection channel.
_QUOTED_CHARS: Final = 100
_ANSWERED: Final = (
    "this server listens on loopback only and answers Host: localhost, 127.0.0.1 or [::1] "
    "(any port); to serve other names, set HOST to an address on the network"
)


def loopback_names(hosts: tuple[str, ...]) -> frozenset[str] | None:
    """The Host names a listener on ``hosts`` answers: None (any) unless it is loopback-only,
    else the loopback names plus the addresses themselves (HOST=127.0.0.2 is called so)."""
    if not is_loopback_only(hosts):
        return None
    return LOOPBACK_NAMES | {url_host(host) for host in hosts}


def host_name(value: str) -> str | None:
    """A Host header's name without its port, lowercased; None when it is not host[:port]."""
    match = _HOST_VALUE.fullmatch(value.strip())
    return match.group(1).lower() if match else None


def host_refusal(headers: CIMultiDictProxy[str], names: frozenset[str]) -> web.Response | None:
    """The 421 for a request not addressed to one of ``names``; None when it is.

    A Host sent twice never gets here: aiohttp's parser refuses it, and
    ``protocol.RefusingRequestHandler`` answers 400 "Duplicate 'Host' header found".
    """
    value = headers.get("Host")
    if value is None:
        message = f"Host header is required; {_ANSWERED}"
    elif host_name(value) in names:
        return None
    else:
        quoted = repr(value[:_QUOTED_CHARS])
        message = f"Host header {quoted} is not a loopback name: {_ANSWERED}"
    # 421 Misdirected Request, as the MCP SDK's own transports answer a Host they do not serve.
    return jsonrpc_error(HOST_NOT_LOOPBACK_CODE, message, status=421)
