"""The two test tiers' helpers (the convention is in ``tests/conftest.py``'s docstring)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest


def sample(values: Sequence[Any], keep: int, *, ids: Callable[[Any], str] = str) -> list[Any]:
    """``values`` as parameters, all but ``keep`` of them (spread evenly, always the same ones)
    marked ``soak``: the default tier runs the sample, ``--soak`` every value."""
    kept = {len(values) * k // keep for k in range(keep)} if keep < len(values) else set(range(len(values)))
    return [
        pytest.param(v, id=ids(v), marks=() if i in kept else pytest.mark.soak) for i, v in enumerate(values)
    ]


def runs(item: pytest.Item) -> bool:
    """Whether ``item`` runs in this tier (for a session fixture that prepares the selected tests'
    work ahead of them)."""
    return bool(item.config.getoption("soak")) or item.get_closest_marker("soak") is None
