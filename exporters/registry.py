"""Exporters by name, from the plugin hook (built-ins and plugins alike)."""

from __future__ import annotations

from walkback.journal.errors import ExportError

from .base import Exporter


def exporters() -> dict[str, Exporter]:
    """Every registered exporter by name (built-ins first, then plugins)."""
    from walkback.plugins import manager

    out: dict[str, Exporter] = {}
    for batch in reversed(manager().hook.register_exporters()):
        for exp in batch:
            out.setdefault(exp.name, exp)
    return out


def exporter(name: str) -> Exporter:
    """The exporter called ``name``, or an error naming the ones there are."""
    found = exporters().get(name)
    if found is None:
        raise ExportError(f"no exporter {name!r} (there are: {', '.join(sorted(exporters()))})")
    return found
