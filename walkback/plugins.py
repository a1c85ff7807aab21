"""One plugin manager for importers, exporters and commands; built-ins use it too.

Third-party plugins come from the ``walkback`` entry-point group, loaded once, lazily, and never
under tests (``sys._called_from_test``), as sqlite-utils and datasette do.
"""

from __future__ import annotations

import importlib
import sys

import pluggy

from . import hookspecs

DEFAULT_PLUGINS = ("walkback.importers.builtin", "walkback.exporters.builtin")
"""Modules of walkback's own plugins, registered before any third-party one."""

pm = pluggy.PluginManager("walkback")
pm.add_hookspecs(hookspecs)
_loaded = False


def manager() -> pluggy.PluginManager:
    """The plugin manager with every plugin registered (built-ins first)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for name in DEFAULT_PLUGINS:
            pm.register(importlib.import_module(name), name=name)
        if not getattr(sys, "_called_from_test", False):
            pm.load_setuptools_entrypoints("walkback")
    return pm
