"""Importers: the reference journal and (later) other agents' logs, into one timeline model."""

from .registry import IMPORTERS, detect, ensure_plugins_loaded, load, load_chunks
from .to_journal import write_journal

__all__ = ["IMPORTERS", "detect", "ensure_plugins_loaded", "load", "load_chunks", "write_journal"]
