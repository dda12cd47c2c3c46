"""Whether another process already listens on the port a process is about to serve on.

The API binds only after its runtime is open (seconds: the embedded PostgreSQL, the model), so a
port taken by an earlier server would be reported only after all that, and without saying how
to choose another. Probing first costs a bind per address; the real bind still reports a race
it loses.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence


def taken_on(hosts: Sequence[str], port: int) -> str | None:
    """The first of ``hosts`` where another socket listens on ``port``, or None (also for port
    0, which the OS picks free). Any other failure to bind is left to the real bind to report."""
    if port == 0:
        return None
    for host in hosts:
        try:
            addresses = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
        except socket.gaierror:
            continue
        for family, kind, proto, _, address in addresses:
            with socket.socket(family, kind, proto) as probe:
                # As asyncio's listener is set up: a port in TIME_WAIT is free to it, and an IPv6
                # socket is IPv6-only, so "::" does not collide with an IPv4 listener.
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                try:
                    probe.bind(address)
                except OSError as error:
                    if error.errno == errno.EADDRINUSE:
                        return host
    return None


def port_in_use_text(host: str, port: int, *, variable: str, flag: str) -> str:
    """The refusal, naming both ways to choose another port."""
    return (
        f"startup error: port {port} is already in use on {host} (another server is listening "
        f"there); choose another with {variable}=<port> or {flag} <port> (0 picks a free one)"
    )
