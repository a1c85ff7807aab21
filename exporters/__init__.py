"""Exporters: a session as a journal, a signed bundle, a PDF report, OTLP, CSV and Parquet."""

from .base import (
    Exporter,
    ManyExporter,
    Option,
    SourceExporter,
    atomic_output,
    export_time,
    refuse_own_input,
)
from .registry import exporter, exporters

__all__ = [
    "Exporter",
    "ManyExporter",
    "Option",
    "SourceExporter",
    "atomic_output",
    "export_time",
    "exporter",
    "exporters",
    "refuse_own_input",
]
