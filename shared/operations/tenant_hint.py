"""Which existing tenant a tenant with no memories at all probably meant: one that differs
only by case or by a small typo. Given only where the operations context was opened with
tenant names to disclose (``--local`` on loopback, no key: one person's machine); elsewhere
tenant names are never disclosed and this answers None without reading anything."""

from __future__ import annotations

import msgspec

from shared.operations.browse import stats
from shared.operations.context import OperationsContext

# A typo of at most two edits, and fewer on a short name, where two edits make another word.
MAX_EDITS = 2
CHARS_PER_EDIT = 3


class NearbyTenant(msgspec.Struct, frozen=True, kw_only=True):
    """``memories``: what a request outside any conversation sees of it (a lower bound when
    ``capped``)."""

    name: str
    memories: int
    capped: bool = False


async def nearby_tenant(ops: OperationsContext, tenant: str) -> NearbyTenant | None:
    """The closest other tenant with memories when ``tenant`` has none; None when it has some,
    when none is close, or when tenant names are not to be disclosed."""
    if ops.tenant_names is None:
        return None
    names = await ops.tenant_names.names()
    if tenant in names:
        return None
    close = sorted(
        (distance, name) for name in names if (distance := _distance(tenant, name)) is not None
    )
    for _, name in close:
        answer = await stats(ops, name, None)
        if answer.total:
            return NearbyTenant(name=name, memories=answer.total, capped=answer.capped)
    return None


def _distance(tenant: str, name: str) -> tuple[int, int] | None:
    """How far ``name`` is from ``tenant`` (differing by case alone first), or None when it is
    too far to be a typo."""
    folded = edits(tenant.casefold(), name.casefold())
    if folded == 0:
        return (0, edits(tenant, name))
    if folded > min(MAX_EDITS, len(tenant) // CHARS_PER_EDIT):
        return None
    return (1, folded)


def edits(a: str, b: str) -> int:
    """The Levenshtein distance: insertions, deletions and substitutions."""
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            )
        previous = current
    return previous[-1]
