"""The addresses the API listens on: ``HOST`` and ``--host`` parsed, and what a bind exposes.

A laptop's ``--local`` server has no key, so it listens on loopback unless told otherwise; a pod
must be reachable from its Service, so without ``--local`` the default is every interface. Both
IPv4 and IPv6 are listed for "every interface" because asyncio makes an IPv6 socket IPv6-only:
``::`` alone would drop IPv4 callers, ``0.0.0.0`` alone IPv6 ones.
"""

from __future__ import annotations

import ipaddress
from typing import Final

ALL_INTERFACES: Final[tuple[str, ...]] = ("0.0.0.0", "::")
# IPv4 only: the README's http://127.0.0.1:3000/mcp, and a client that resolves "localhost" to
# ::1 first falls back to 127.0.0.1 when ::1 refuses (curl, Node, httpx all do).
LOOPBACK: Final[tuple[str, ...]] = ("127.0.0.1",)

HOST_RULE: Final = (
    "an IP address or a comma-separated list of them: 127.0.0.1 or localhost (this machine "
    "only), 0.0.0.0 (every IPv4 interface), 0.0.0.0,:: (every interface)"
)


def parse_hosts(raw: str) -> tuple[str, ...]:
    """``raw`` as listening addresses, normalised and without repeats; ValueError if any is not
    an IP address (``localhost`` stands for 127.0.0.1, an IPv6 address may be in brackets).

    Names other than localhost are refused rather than resolved: what a name resolves to can
    change under the process, and an operator choosing what to expose should see the address.
    """
    hosts: list[str] = []
    for item in raw.split(","):
        text = item.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        address = LOOPBACK[0] if text.lower() == "localhost" else str(ipaddress.ip_address(text))
        if address not in hosts:
            hosts.append(address)
    return tuple(hosts)


def is_loopback_only(hosts: tuple[str, ...]) -> bool:
    """Whether nothing but this machine can reach a listener on ``hosts``."""
    return bool(hosts) and all(ipaddress.ip_address(host).is_loopback for host in hosts)


def is_unspecified(host: str) -> bool:
    """Whether ``host`` means every interface (0.0.0.0 or ::) rather than one address."""
    return ipaddress.ip_address(host).is_unspecified


def url_host(host: str) -> str:
    """``host`` as it is written in a URL or a Host header: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host
