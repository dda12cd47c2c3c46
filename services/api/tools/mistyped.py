"""The sentence an empty answer adds when its tenant has no memories at all and another tenant
differs from it only by case or a small typo (``shared.operations.tenant_hint``): on one
person's machine a mistyped tenant would otherwise look like lost memories."""

from __future__ import annotations

from services.api.tools.definition import ToolContext
from services.api.tools.render import plural
from shared.operations import OperationsContext
from shared.operations.tenant_hint import NearbyTenant, nearby_tenant


def hint_text(nearby: NearbyTenant | None, *, via: str) -> str:
    """`` A project named `x` has 12 memories — …``, or "" when there is nothing to say."""
    if nearby is None:
        return ""
    count = plural(nearby.memories, "memory", "memories")
    if nearby.capped:
        count = f"at least {count}"
    return (
        f" A project named `{nearby.name}` has {count} — did you mean that tenant? "
        f"({via} is case-sensitive)"
    )


async def mistyped_tenant(ops: OperationsContext, ctx: ToolContext) -> str:
    """The hint for this request's tenant, or "" (always "" where names are not disclosed)."""
    return hint_text(await nearby_tenant(ops, ctx.tenant), via=ctx.tenant_via)
