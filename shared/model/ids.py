"""Identifiers and the time encodings that keys are built from."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Final

from ulid import ULID, base32

from shared.errors import InvariantError

MAX_ULID_TIME_MS: Final = 2**48 - 1
# Times are converted with integer arithmetic on these: through a float of seconds, about one
# millisecond time in 150 comes back 1 ms early (by decade: 1970s, 1980s, 2000s, 2030s and many
# after 2100; none in the 2010s and 2020s).
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS: Final = timedelta(milliseconds=1)
CONVERSATION_DIGEST_CHARS: Final = 16
DAY_MS: Final = 86_400_000
MAX_TENANT_CHARS: Final = 128
# A tenant lands in an S3 key path and in an S3 Vectors filter value: this is the intersection
# of what both accept. It also excludes "." and "..", which would walk the key path.
TENANT_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_CONVERSATION_CHARS: Final = 512
# Printable ASCII without whitespace: the platform's ids (chat:…, slack:…:…) and percent-encodings.
CONVERSATION_PATTERN: Final = re.compile(r"[\x21-\x7e]+")
# What ``iso_ms`` writes (a stamp already in it is kept as it is).
_CANONICAL: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def is_tenant(value: str) -> bool:
    """Whether ``value`` may name a tenant (the X-Memory-Tenant header's rule)."""
    return len(value) <= MAX_TENANT_CHARS and TENANT_PATTERN.fullmatch(value) is not None


def is_conversation(value: str) -> bool:
    """Whether ``value`` may name a conversation (the X-Conversation-Id header's rule)."""
    if len(value) > MAX_CONVERSATION_CHARS:
        return False
    return CONVERSATION_PATTERN.fullmatch(value) is not None


def wall_clock_ms() -> int:
    """Now, in milliseconds since the epoch: the clock every process passes where a clock is a
    parameter (tests pass their own)."""
    return time.time_ns() // 1_000_000


def new_ulid(now_ms: int) -> str:
    """A fresh ULID whose time part is ``now_ms``."""
    if not 0 <= now_ms <= MAX_ULID_TIME_MS:
        raise InvariantError(f"ULID time out of range: {now_ms}")
    # Built from bytes rather than a float timestamp, which can round a millisecond away.
    return str(ULID.from_bytes(now_ms.to_bytes(6, "big") + os.urandom(10)))


def ulid_time_ms(value: str) -> int | None:
    """The millisecond time encoded in a ULID's first 10 characters, or None if it is not one."""
    if len(value) != 26:
        return None
    try:
        return ULID.from_str(value).milliseconds
    except ValueError:
        return None


def inverted_time(ms: int) -> str:
    """10 Crockford-base32 characters of (2^48 − 1 − ms): ascending order is newest first."""
    return base32.encode_timestamp((MAX_ULID_TIME_MS - ms).to_bytes(6, "big"))


def conversation_digest(conversation: str) -> str:
    """The first 16 hex characters of SHA-256: the conversation's mark on an index key."""
    return hashlib.sha256(conversation.encode()).hexdigest()[:CONVERSATION_DIGEST_CHARS]


def iso_ms(now_ms: int) -> str:
    """ISO-8601 UTC with exactly three fractional digits, so strings compare as times (the
    year always four digits: strftime's ``%Y`` leaves years before 1000 short)."""
    stamp = _EPOCH + now_ms * _ONE_MS
    return f"{stamp.year:04d}" + stamp.strftime("-%m-%dT%H:%M:%S.") + f"{now_ms % 1000:03d}Z"


def canonical_iso(value: str) -> str | None:
    """``value`` in the one form stored and compared (``iso_ms``: UTC, milliseconds), or None
    when it does not parse. Any ISO-8601 form is read (an offset, the basic format, a week
    date); a time without an offset is UTC. Equal-width canonical strings compare as the times
    they name, which is what ``Memory.expired`` relies on."""
    parsed = parse_iso_ms(value)
    if parsed is None:
        return None
    return value if _CANONICAL.fullmatch(value) else iso_ms(parsed)


# Ranking parses two stamps per candidate on every recall, and the same memories come back
# recall after recall: a hit costs a fraction of a parse (docs/benchmarks.md). 32k entries is
# ~5 MB.
@functools.lru_cache(maxsize=32_768)
def parse_iso_ms(value: str) -> int | None:
    """Milliseconds since the epoch for an ISO-8601 timestamp, or None when it does not parse."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _ONE_MS
