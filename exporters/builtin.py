"""walkback's own exporters, registered through the same hook as any plugin's."""

from __future__ import annotations

from typing import Any

from walkback.hookspecs import hookimpl

from . import journal


@hookimpl
def register_exporters() -> list[Any]:
    return [journal.EXPORTER]
