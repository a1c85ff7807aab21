"""Importers: the reference journal and other agents' logs, into one timeline model."""

from .base import CERTAIN, LIKELY, NO, WEAK, Follows, Importer, MultiSession, MustReread, Prepares
from .registry import detect, extend, importers, load, load_chunks, parts, prepare, scores, split_part

__all__ = [
    "CERTAIN",
    "LIKELY",
    "NO",
    "WEAK",
    "Follows",
    "Importer",
    "MustReread",
    "MultiSession",
    "Prepares",
    "detect",
    "extend",
    "importers",
    "load",
    "load_chunks",
    "parts",
    "prepare",
    "scores",
    "split_part",
]
