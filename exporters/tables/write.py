"""Writers of the tabular exports: CSV, a Parquet file, a partitioned Parquet dataset."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from walkback.journal.errors import ExportError
from walkback.timeline.session import Session

from ..base import atomic_output, need
from ..facts import session_id
from .columns import COLUMNS, rows

PARTITIONS = ("source_format", "day")
"""The dataset's partition columns (folders ``source_format=<format>/day=<YYYY-MM-DD>``)."""
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The folder of rows without a value (events without a time), which Hive and DuckDB read as null."""


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
    table = arrow_table(rows(session))
    with atomic_output(out) as f:
        pq.write_table(table, f)
    return out


def write_dataset(sessions: Iterable[Session], out: Path) -> Path:
    """Sessions as one Parquet dataset under ``out``, partitioned by :data:`PARTITIONS`.

    Each session writes ``<session id>.parquet`` in each partition it has rows in (atomically),
    so exporting a session again replaces its files (and removes those it no longer needs)
    rather than adding rows twice.
    """
    pq = need("pyarrow.parquet", "parquet", "parquet")
    if out.exists() and not out.is_dir():
        raise ExportError("a Parquet dataset is a folder, and this is a file", path=out)
    out.mkdir(parents=True, exist_ok=True)
    for s in sessions:
        df = rows(s)
        name = _file_name(str(df["session"].cat.categories[0]) if len(df) else session_id(s))
        written: set[Path] = set()
        groups = df.groupby(list(PARTITIONS), dropna=False, observed=True, sort=True)
        for (fmt, day), part in groups:
            folder = out / f"source_format={_escape(str(fmt))}" / f"day={_escape(_date(day))}"
            folder.mkdir(parents=True, exist_ok=True)
            with atomic_output(folder / name) as f:
                pq.write_table(arrow_table(part.drop(columns=list(PARTITIONS))), f)
            written.add(folder / name)
        for stale in out.glob(f"*/*/{name}"):
            if stale not in written:
                stale.unlink()
    return out


def schema(names: Iterable[str]) -> Any:
    """The Arrow types of the columns: strings dictionary-encoded, times in microseconds (what
    Spark reads), ``day`` a date."""
    pa = need("pyarrow", "parquet", "parquet")
    ints = {"order", "lsn", "ref", "input_tokens", "output_tokens", "source_line"}
    special = {"time": pa.timestamp("us", "UTC"), "day": pa.date32()}
    return pa.schema(
        [
            (c, special.get(c) or (pa.int64() if c in ints else pa.dictionary(pa.int32(), pa.string())))
            for c in names
        ]
    )


def arrow_table(df: pd.DataFrame) -> Any:
    """The rows as an Arrow table of :func:`schema` (times truncated to microseconds)."""
    pa = need("pyarrow", "parquet", "parquet")
    table = pa.Table.from_pandas(df, preserve_index=False)
    if "day" in table.column_names:
        k = table.column_names.index("day")
        table = table.set_column(k, "day", table.column("day").cast(pa.timestamp("us", "UTC"), safe=False))
    return table.cast(schema(table.column_names), safe=False)


def _date(day: Any) -> str | None:
    return None if pd.isna(day) else pd.Timestamp(day).strftime("%Y-%m-%d")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _file_name(sid: str) -> str:
    return _UNSAFE.sub("_", sid)[:200] + ".parquet"


def _escape(value: str | None) -> str:
    """A partition value as a folder name (hive escaping of what a path cannot hold)."""
    if value is None:
        return NULL_PARTITION
    return re.sub(r"[^A-Za-z0-9._ -]", lambda m: f"%{ord(m.group()):02X}", str(value))
