"""``walkback export csv|parquet``: one row per event, with stable columns (docs/exports.md).

The rows are built from arrays (:mod:`.columns`): the timeline's own columns, and the session's
measures for model, tokens and file hashes. A folder of sessions becomes one Parquet dataset
partitioned by source format and day (hive style:
``source_format=walkback/day=2026-01-01/<session>.parquet``), which DuckDB or Spark read as one
table.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from walkback.timeline.session import Session

from ..base import Option


class CsvExporter:
    """``walkback export csv``: one row per event, every session of PATH in one file."""

    name = "csv"
    suffix = ".csv"
    extra = None
    options: tuple[Option, ...] = ()

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        from .write import write_csv

        return write_csv([session], Path(out))

    def export_many(self, sessions: Iterable[Session], out: Path, **options: Any) -> Path:
        from .write import write_csv

        return write_csv(sessions, Path(out))


class ParquetExporter:
    """``walkback export parquet``: a session as a Parquet file; several as a partitioned dataset."""

    name = "parquet"
    suffix = ".parquet"
    extra = "parquet"
    options: tuple[Option, ...] = ()

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        from .write import write_dataset, write_parquet

        if Path(out).is_dir():
            return write_dataset([session], Path(out))
        return write_parquet(session, Path(out))

    def export_many(self, sessions: Iterable[Session], out: Path, **options: Any) -> Path:
        from .write import write_dataset

        return write_dataset(sessions, Path(out))


CSV = CsvExporter()
PARQUET = ParquetExporter()
