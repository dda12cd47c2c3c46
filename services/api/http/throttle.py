"""Wrong keys cost time, per client address: backoff, then a bounded lockout.

A delay per request slows nothing: 60 guesses sent at once all waited their half second
together (72-125 guesses/s on the page, 170-297/s on ``/mcp``, which had no delay at all), and
each held a connection meanwhile. So the count is kept per client address, shared by ``/mcp``
and the memory page (one ``KeyThrottle`` per process):

- the n-th wrong key in a row from an address is held ``FIRST_DELAY_S * 2**(n-1)`` (at most
  ``MAX_DELAY_S``) before its 401, and while it is held, any other key from that address is
  answered ``429`` with ``Retry-After`` at once, unchecked: one guess at a time per address, and
  no connection held but that one;
- from the ``LOCKOUT_AFTER``-th wrong key on, the address is locked out: every request with a
  key is ``429`` unchecked for ``LOCKOUT_S`` (doubling with each further wrong key, at most
  ``MAX_LOCKOUT_S``);
- the right key clears the address's count; an address silent for ``FORGET_AFTER_S`` after
  its last wrong key and its lockout is forgotten.

Only the address that guessed is slowed: the right key from any other address is answered at
once, so nobody can lock the rightful user out from elsewhere. An IPv6 client is counted by
its /64, the block one host is usually given. The address is the connection's peer, unless
the peer is one of ``TRUSTED_PROXIES``: then it is the nearest address in ``X-Forwarded-For``
that is not a trusted proxy (behind a proxy every client would otherwise be the proxy, and one
guesser would lock everyone out). An untrusted peer's ``X-Forwarded-For`` is ignored, so a
guesser cannot escape its count by naming itself anew.

Each wrong key leaves a ``key_refused`` line and each lockout a ``key_lockout`` line (the
surface, the address, the count; never the key), and ``mcp_memory_auth_refusals_total`` counts
refusals by surface and reason.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final, Literal

from aiohttp import web

from services.api.metrics import AUTH_REFUSALS

logger = logging.getLogger(__name__)

Surface = Literal["mcp", "ui"]

FIRST_DELAY_S: Final = 0.5
MAX_DELAY_S: Final = 4.0
LOCKOUT_AFTER: Final = 5
LOCKOUT_S: Final = 60.0
MAX_LOCKOUT_S: Final = 900.0
FORGET_AFTER_S: Final = 900.0
# Addresses remembered at most; beyond it the least recently seen is forgotten.
MAX_CLIENTS: Final = 10_000


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _parsed(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]").partition("%")[0])
    except ValueError:
        return None


def client_of(remote: str | None) -> str:
    """The address a count is kept under: the IPv4 address, or an IPv6 address's /64."""
    if not remote:
        return "unknown"
    address = _parsed(remote)
    if address is None:
        return remote
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class _Client:
    __slots__ = ("failures", "held", "last_s", "locked_until_s")

    def __init__(self, now_s: float) -> None:
        self.failures = 0
        self.held = False
        self.last_s = now_s
        self.locked_until_s = 0.0


class KeyThrottle:
    def __init__(
        self,
        *,
        trusted_proxies: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._trusted: tuple[Network, ...] = tuple(
            ipaddress.ip_network(network, strict=False) for network in trusted_proxies
        )
        self._clock = clock
        self._clients: OrderedDict[str, _Client] = OrderedDict()

    def _trusts(self, text: str | None) -> bool:
        address = _parsed(text) if text else None
        return address is not None and any(address in network for network in self._trusted)

    def client(self, request: web.BaseRequest) -> str:
        """Who is guessing: the address its count is kept under (see the module's notes)."""
        remote = request.remote
        if not self._trusts(remote):
            return client_of(remote)
        hops = ",".join(request.headers.getall("X-Forwarded-For", [])).split(",")
        for hop in reversed([hop.strip() for hop in hops if hop.strip()]):
            if _parsed(hop) is None:
                break  # not an address: what is left of it cannot be trusted
            if not self._trusts(hop):
                return client_of(hop)
            remote = hop
        return client_of(remote)

    def refusal(self, name: str, *, surface: Surface) -> int | None:
        """Seconds the client ``name`` (``client``) must wait before a key of its is checked
        (the Retry-After of a 429), or None when it may try now. Call it with no await between
        it and the check."""
        client = self._clients.get(name)
        if client is None:
            return None
        now = self._clock()
        if client.locked_until_s > now:
            AUTH_REFUSALS.labels(surface=surface, reason="locked_out").inc()
            return max(1, math.ceil(client.locked_until_s - now))
        if client.held:
            AUTH_REFUSALS.labels(surface=surface, reason="one_at_a_time").inc()
            return max(1, math.ceil(_delay(client.failures)))
        if now - max(client.last_s, client.locked_until_s) > FORGET_AFTER_S:
            del self._clients[name]
        return None

    def succeeded(self, name: str) -> None:
        self._clients.pop(name, None)

    async def failed(self, name: str, *, surface: Surface) -> None:
        """Count a wrong key from the client ``name``, and hold the request for its delay (none
        when the count starts a lockout: the lockout is the cost)."""
        now = self._clock()
        client = self._clients.pop(name, None) or _Client(now)
        self._clients[name] = client  # most recently seen last
        if len(self._clients) > MAX_CLIENTS:
            self._clients.popitem(last=False)
        client.failures += 1
        client.last_s = now
        AUTH_REFUSALS.labels(surface=surface, reason="wrong_key").inc()
        if client.failures >= LOCKOUT_AFTER:
            lockout = min(LOCKOUT_S * 2 ** (client.failures - LOCKOUT_AFTER), MAX_LOCKOUT_S)
            client.locked_until_s = now + lockout
            logger.warning(
                "key_lockout",
                extra={
                    "surface": surface,
                    "client": name,
                    "failures": client.failures,
                    "seconds": lockout,
                },
            )
            return
        delay = _delay(client.failures)
        logger.warning(
            "key_refused",
            extra={
                "surface": surface,
                "client": name,
                "failures": client.failures,
                "delay_s": delay,
            },
        )
        client.held = True
        try:
            await asyncio.sleep(delay)
        finally:
            client.held = False


def _delay(failures: int) -> float:
    return float(min(FIRST_DELAY_S * 2.0 ** max(failures - 1, 0), MAX_DELAY_S))
