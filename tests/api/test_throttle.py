"""The wrong-key count's rules on a clock of the test's own: the backoff, the lockout's bound,
forgetting, and what counts as one client."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import make_mocked_request

from services.api.http import throttle as throttle_module
from services.api.http.throttle import (
    FIRST_DELAY_S,
    FORGET_AFTER_S,
    LOCKOUT_AFTER,
    LOCKOUT_S,
    MAX_DELAY_S,
    MAX_LOCKOUT_S,
    KeyThrottle,
    client_of,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The delays asked for, without waiting them."""
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    monkeypatch.setattr(f"{throttle_module.__name__}.asyncio.sleep", sleep)
    return delays


async def test_the_delay_doubles_to_its_cap_then_the_lockout_doubles_to_its_bound(
    slept: list[float],
) -> None:
    clock = Clock()
    keys = KeyThrottle(clock=clock)
    lockouts: list[int | None] = []
    for _ in range(LOCKOUT_AFTER + 6):
        assert keys.refusal("192.0.2.1", surface="mcp") is None
        await keys.failed("192.0.2.1", surface="mcp")
        lockout = keys.refusal("192.0.2.1", surface="mcp")
        lockouts.append(lockout)
        clock.now += (lockout or 0) + 1  # wait each lockout out, and no longer
    expected = [min(FIRST_DELAY_S * 2**n, MAX_DELAY_S) for n in range(LOCKOUT_AFTER - 1)]
    assert slept == expected
    assert lockouts[: LOCKOUT_AFTER - 1] == [None] * (LOCKOUT_AFTER - 1)
    locked = lockouts[LOCKOUT_AFTER - 1 :]
    assert locked[0] == LOCKOUT_S and locked[1] == 2 * LOCKOUT_S
    assert max(value or 0 for value in locked) == MAX_LOCKOUT_S == locked[-1]


async def test_one_guess_at_a_time_and_only_for_its_own_address() -> None:
    keys = KeyThrottle()
    held = asyncio.create_task(keys.failed("192.0.2.1", surface="ui"))
    await asyncio.sleep(0)
    assert keys.refusal("192.0.2.1", surface="ui") == 1
    assert keys.refusal("192.0.2.2", surface="ui") is None
    await held
    assert keys.refusal("192.0.2.1", surface="ui") is None


async def test_a_lockout_waited_out_is_not_forgotten(slept: list[float]) -> None:
    clock = Clock()
    keys = KeyThrottle(clock=clock)
    for _ in range(LOCKOUT_AFTER + 4):  # 60 s doubled four times is over the bound
        await keys.failed("192.0.2.1", surface="mcp")
    assert keys.refusal("192.0.2.1", surface="mcp") == MAX_LOCKOUT_S
    clock.now += MAX_LOCKOUT_S + 1
    assert keys.refusal("192.0.2.1", surface="mcp") is None
    await keys.failed("192.0.2.1", surface="mcp")  # one more guess, then locked out again
    assert keys.refusal("192.0.2.1", surface="mcp") == MAX_LOCKOUT_S


async def test_the_right_key_and_silence_clear_the_count(slept: list[float]) -> None:
    clock = Clock()
    keys = KeyThrottle(clock=clock)
    await keys.failed("192.0.2.1", surface="mcp")
    await keys.failed("192.0.2.1", surface="mcp")
    keys.succeeded("192.0.2.1")
    await keys.failed("192.0.2.1", surface="mcp")
    clock.now += FORGET_AFTER_S + 1
    assert keys.refusal("192.0.2.1", surface="mcp") is None
    await keys.failed("192.0.2.1", surface="mcp")
    assert slept == [FIRST_DELAY_S, 2 * FIRST_DELAY_S, FIRST_DELAY_S, FIRST_DELAY_S]


def test_an_ipv6_host_is_counted_by_its_64_and_a_mapped_ipv4_as_itself() -> None:
    assert client_of("2001:db8:1:2:aaaa::1") == client_of("2001:db8:1:2:bbbb::9")
    assert client_of("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_of("2001:db8:1:3::1") != client_of("2001:db8:1:2::1")
    assert client_of("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_of(None) == "unknown"


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("192.0.2.1", "203.0.113.5", "192.0.2.1"),  # not a trusted proxy: header ignored
        ("10.0.0.2", "203.0.113.5", "203.0.113.5"),
        ("10.0.0.2", "198.51.100.1, 203.0.113.5, 10.0.0.9", "203.0.113.5"),  # nearest untrusted
        ("10.0.0.2", "10.0.0.7", "10.0.0.7"),  # every hop trusted: the farthest
        ("10.0.0.2", "203.0.113.5, junk", "10.0.0.2"),  # garbage: nothing beyond it trusted
        ("10.0.0.2", None, "10.0.0.2"),
    ],
)
def test_a_trusted_proxy_names_the_client(peer: str, forwarded: str | None, client: str) -> None:
    keys = KeyThrottle(trusted_proxies=("10.0.0.0/8",))
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    request = make_mocked_request("POST", "/mcp", headers=headers)
    request._transport_peername = (peer, 1234)
    assert keys.client(request) == client
