"""A package's re-exports read on first use (PEP 562): a process that imports one module of a
package on its way in does not pay for every module the package re-exports."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def exports_on_first_use(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """The package's module-level ``__getattr__``: each name of ``exports`` read from the
    module it names the first time it is asked for; any other name is no attribute."""

    def attribute(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return attribute
