"""Importers: the reference journal and other agents' logs, into one timeline model."""

from .base import CERTAIN, LIKELY, NO, WEAK, Importer, MultiSession
from .registry import detect, importers, load, load_chunks, parts, scores, split_part

__all__ = [
    "CERTAIN",
    "LIKELY",
    "NO",
    "WEAK",
    "Importer",
    "MultiSession",
    "detect",
    "importers",
    "load",
    "load_chunks",
    "parts",
    "scores",
    "split_part",
]
