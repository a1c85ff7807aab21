"""A package's public names loaded on first use (PEP 562), for every part that has a light
submodule: ``walkback search`` opens the archive's store, an agent's hook appends to a journal,
and neither may pay for its package's other modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def names(package: str, namespace: dict[str, Any], homes: dict[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: a name in ``homes`` (name -> the relative module
    that defines it) is imported when first asked, then kept in ``namespace``."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value
        return value

    return __getattr__
