"""Exporters: a session as a journal, a signed bundle, a PDF report, OTLP, CSV and Parquet."""

from .base import Exporter, Option, SourceExporter, atomic_output
from .registry import exporter, exporters

__all__ = ["Exporter", "Option", "SourceExporter", "atomic_output", "exporter", "exporters"]
