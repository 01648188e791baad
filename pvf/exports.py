"""Package re-exports resolved on first use.

`lazy_attributes(package, exports)` is a module `__getattr__` that imports
`exports[name]` (a module path) the first time `package.name` is read, so
that importing a package, or one light module of it (a registry the `pvf`
command reads), loads nothing heavy: torch only when a net is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `package` resolving each name of `exports` in its module."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    return __getattr__
