"""walkback's own exporters, registered through the same hook as any plugin's."""

from __future__ import annotations

from typing import Any

from walkback.hookspecs import hookimpl

from . import bundle, html, journal, markdown, otlp, pdf, tables


@hookimpl
def register_exporters() -> list[Any]:
    return [
        journal.EXPORTER,
        bundle.EXPORTER,
        pdf.EXPORTER,
        html.EXPORTER,
        markdown.EXPORTER,
        otlp.EXPORTER,
        tables.CSV,
        tables.PARQUET,
    ]


@hookimpl
def register_importers() -> list[Any]:
    """A bundle opens like any session; its importer lives here because it verifies first."""
    from .bundle import importer

    return [importer.IMPORTER]
