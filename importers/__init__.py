"""Importers: the reference journal and other agents' logs, into one timeline model.

The names below load on first use (PEP 562), so a light submodule (the archive's store, which
``walkback search`` opens) does not pull in the timeline model with its package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from walkback.lazy import names

if TYPE_CHECKING:
    from .base import CERTAIN, LIKELY, NO, WEAK, Follows, Importer, MultiSession, MustReread
    from .registry import detect, extend, importers, load, load_chunks, parts, scores, split_part

_HOME = {
    **dict.fromkeys(
        ("CERTAIN", "LIKELY", "NO", "WEAK", "Follows", "Importer", "MultiSession", "MustReread"),
        ".base",
    ),
    **dict.fromkeys(
        ("detect", "extend", "importers", "load", "load_chunks", "parts", "scores", "split_part"),
        ".registry",
    ),
}
"""Each public name -> the module that defines it."""

__all__ = [
    "CERTAIN",
    "LIKELY",
    "NO",
    "WEAK",
    "Follows",
    "Importer",
    "MustReread",
    "MultiSession",
    "detect",
    "extend",
    "importers",
    "load",
    "load_chunks",
    "parts",
    "scores",
    "split_part",
]


__getattr__ = names(__name__, globals(), _HOME)
