"""Writers of the tabular exports: CSV, a Parquet file, a partitioned Parquet dataset."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from walkback.journal.errors import ExportError
from walkback.journal.fileops import sweep_temps
from walkback.timeline.session import Session

from ..base import atomic_output, need
from .columns import COLUMNS, Column, columns, rows

PARTITIONS = ("source_format", "day")
"""The dataset's partition columns (folders ``source_format=<format>/day=<YYYY-MM-DD>``)."""
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The folder of rows without a value (events without a time), which Hive and DuckDB read as null."""
_NO_DAY = np.iinfo(np.int32).max
"""The day of the rows without a time, while they are grouped (no date is that far)."""


def write_csv(sessions: Iterable[Session], out: Path) -> Path:
    """All the sessions' rows in one CSV file (header once; times in RFC 3339 UTC)."""
    with atomic_output(out, "w") as f:
        header = True
        for s in sessions:
            df = rows(s)
            df["time"] = df["time"].dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            df["day"] = df["day"].dt.strftime("%Y-%m-%d")
            df.to_csv(f, index=False, header=header, lineterminator="\n")
            header = False
        if header:
            f.write(",".join(COLUMNS) + "\n")
    return out


def write_parquet(session: Session, out: Path) -> Path:
    """One session as one Parquet file with every column."""
    pq = need("pyarrow.parquet", "parquet", "parquet")
    table = arrow_table(columns(session))
    with atomic_output(out) as f:
        pq.write_table(table, f)
    return out


def write_dataset(sessions: Iterable[Session], out: Path) -> Path:
    """Sessions as one Parquet dataset under ``out``, partitioned by :data:`PARTITIONS`.

    Each session writes ``<session id>.parquet`` in each partition it has rows in (atomically),
    so exporting a session again replaces its files (and removes those it no longer needs, and
    the temp files a killed export of it left) rather than adding rows twice.
    """
    pq = need("pyarrow.parquet", "parquet", "parquet")
    if out.exists() and not out.is_dir():
        raise ExportError("a Parquet dataset is a folder, and this is a file", path=out)
    out.mkdir(parents=True, exist_ok=True)
    for s in sessions:
        cols = columns(s)
        name = _file_name(str(cols["session"].labels[0]))
        table = arrow_table({k: c for k, c in cols.items() if k not in PARTITIONS})
        day = cols["day"]
        days = np.where(day.missing, _NO_DAY, day.values)
        written: set[Path] = set()
        for d in np.unique(days).tolist():
            folder = out / f"source_format={_escape(s.format)}" / f"day={_escape(_date(d))}"
            folder.mkdir(parents=True, exist_ok=True)
            with atomic_output(folder / name) as f:
                pq.write_table(table.take(np.flatnonzero(days == d)), f)
            written.add(folder / name)
        for stale in out.glob(f"*/*/{name}"):
            if stale not in written:
                stale.unlink()
        for folder in out.glob("*/*/"):  # a killed export's temp files, in partitions not written now
            sweep_temps(folder / name)
    return out


def arrow_table(cols: dict[str, Column]) -> Any:
    """The columns as an Arrow table: strings dictionary-encoded, times in microseconds (what
    Spark reads), ``day`` a date."""
    pa = need("pyarrow", "parquet", "parquet")
    types = {"time": pa.timestamp("us", "UTC"), "day": pa.date32(), "int": pa.int64()}

    def array(c: Column) -> Any:
        if c.type == "string":
            return pa.DictionaryArray.from_arrays(
                pa.array(c.values, pa.int32(), mask=c.missing), pa.array(list(c.labels), pa.string())
            )
        return pa.array(c.values, types[c.type], mask=c.missing)

    return pa.table({name: array(c) for name, c in cols.items()})


def _date(day: int) -> str | None:
    return None if day == _NO_DAY else str(np.datetime64(day, "D"))


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _file_name(sid: str) -> str:
    return _UNSAFE.sub("_", sid)[:200] + ".parquet"


def _escape(value: str | None) -> str:
    """A partition value as a folder name (hive escaping of what a path cannot hold)."""
    if value is None:
        return NULL_PARTITION
    return re.sub(r"[^A-Za-z0-9._ -]", lambda m: f"%{ord(m.group()):02X}", str(value))
