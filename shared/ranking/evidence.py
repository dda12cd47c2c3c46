"""What a probable update rests on (``shared.ranking.updates``): the kind of evidence and the
values it names (pure)."""

from __future__ import annotations

from typing import Literal

import msgspec

Evidence = Literal["value", "replaced", "negation"]


class Update(msgspec.Struct, frozen=True, kw_only=True):
    """Why a text was taken to update another: the kind of evidence and the values it names
    (what the older text says, what the newer says instead; either may be empty)."""

    evidence: Evidence
    old: tuple[str, ...]
    new: tuple[str, ...]
