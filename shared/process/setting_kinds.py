"""The kinds of value a setting takes: how each is parsed, which values it admits, and the rule
a refusal states (``shared.config`` reads the variables and names them in the refusal)."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from typing import Final, Generic, TypeVar

from shared.process.listen import HOST_RULE, parse_hosts
from shared.process.logs import LOG_FORMATS, LogFormat

T = TypeVar("T")

MAX_DEADLINE_S: Final = 300.0


class Kind(Generic[T]):
    """A kind of value: how it is parsed, which values it admits, and the rule a refusal states."""

    def __init__(self, parse: Callable[[str], T], rule: str, admits: Callable[[T], bool]) -> None:
        self.rule = rule
        self._parse = parse
        self._admits = admits

    def parse(self, raw: str) -> T:
        value = self._parse(raw)
        if not self._admits(value):
            raise ValueError(raw)
        return value


def _networks(raw: str) -> tuple[str, ...]:
    """IP addresses or networks, comma-separated, normalised (an address is its own /32 or
    /128); ValueError if any is neither."""
    items = [item.strip() for item in raw.split(",")]
    return tuple(str(ipaddress.ip_network(item, strict=False)) for item in items if item)


def _flag(raw: str) -> bool:
    if raw.lower() not in ("true", "false", "1", "0"):
        raise ValueError(raw)
    return raw.lower() in ("true", "1")


def _log_format(raw: str) -> LogFormat:
    for known in LOG_FORMATS:
        if raw.lower() == known:
            return known
    raise ValueError(raw)


POSITIVE_INT: Final = Kind(int, "a positive integer", lambda v: v > 0)
MEGABYTES: Final = Kind(int, "a whole number of megabytes, 0 or more", lambda v: v >= 0)
PORT: Final = Kind(int, "an integer between 1 and 65535", lambda v: 0 < v < 65536)
SECONDS: Final = Kind(float, "a positive number of seconds", lambda v: math.isfinite(v) and v > 0)
GRACE: Final = Kind(float, "a number of seconds, 0 or more", lambda v: math.isfinite(v) and v >= 0)
# Above five minutes is a unit mistake (milliseconds), not a deadline anyone could wait out.
DEADLINE: Final = Kind(
    float,
    f"a number of seconds greater than 0 and at most {MAX_DEADLINE_S:g}",
    lambda v: math.isfinite(v) and 0 < v <= MAX_DEADLINE_S,
)
# Zero admits every hit, and confidence is a multiple of the floor: everything would be HIGH.
SIMILARITY: Final = Kind(
    float, "a number greater than 0 and at most 1", lambda v: math.isfinite(v) and 0 < v <= 1
)
FLAG: Final = Kind(_flag, "true or false", lambda _: True)
HOSTS: Final = Kind(parse_hosts, HOST_RULE, lambda _: True)
NETWORKS: Final = Kind(
    _networks,
    "IP addresses or networks, comma-separated: 10.0.0.0/8, 192.0.2.7, fd00::/8",
    lambda value: len(value) > 0,
)
LOG_FORMAT: Final = Kind(_log_format, "auto, text or json", lambda _: True)
