"""The plugin hooks: how importers, exporters and commands join walkback (built-ins included).

A plugin is a module (or object) with functions named like these, marked ``@hookimpl``, found
through the ``walkback`` entry-point group; walkback's own importers and exporters register
through the same hooks (:data:`walkback.plugins.DEFAULT_PLUGINS`).
"""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("walkback")
hookimpl = pluggy.HookimplMarker("walkback")


@hookspec
def register_importers() -> list[Any]:
    """Importers to add (objects satisfying :class:`walkback.importers.Importer`)."""
    return []


@hookspec
def register_exporters() -> list[Any]:
    """Exporters to add (objects satisfying :class:`walkback.exporters.Exporter`)."""
    return []


@hookspec
def register_commands(cli: Any) -> None:
    """Add click commands to the ``walkback`` group."""
