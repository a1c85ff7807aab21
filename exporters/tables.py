"""``walkback export csv|parquet``: one row per event, with stable columns (docs/exports.md).

The rows start from :func:`walkback.timeline.frame.frame` (the table's columns as they are, strings
categorical); the columns that need an event's content (model, tokens, file hashes) are built
from typed details, and only for the events that have them: model calls and results, and tool
calls that change a file. A folder of sessions becomes one Parquet dataset partitioned by source
format and day (hive style: ``source_format=walkback/day=2026-01-01/<session>.parquet``), which
DuckDB or Spark read as one table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from walkback.journal.errors import ExportError
from walkback.timeline.details import ModelCall, ModelResult, ToolCall
from walkback.timeline.kinds import FILE, KIND_INDEX
from walkback.timeline.session import Session

from .base import Option, atomic_output, need
from .facts import details, session_id

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = (
    "session",
    "source_format",
    "agent",
    "parent_agent",
    "order",
    "lsn",
    "time",
    "day",
    "kind",
    "type",
    "tool",
    "target",
    "status",
    "ref",
    "model",
    "input_tokens",
    "output_tokens",
    "file_pre",
    "file_post",
    "source_file",
    "source_line",
)
"""The columns, in order; their meanings are in docs/exports.md (tests pin both)."""
PARTITIONS = ("source_format", "day")
"""The dataset's partition columns (folders ``source_format=<format>/day=<YYYY-MM-DD>``)."""
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The folder of rows without a value (events without a time), which Hive and DuckDB read as null."""


def rows(session: Session) -> pd.DataFrame:
    """One row per event with :data:`COLUMNS`: strings categorical, absent values null."""
    import pandas as pd
    from walkback.timeline.frame import frame

    df = frame(session)
    n = len(df)
    t = session.table
    sid = session_id(session)
    for name in ("agent", "type", "tool", "target", "status"):
        df[name] = _nulls_for_empty(df[name])
    agents = df["agent"].cat
    parents = [_parent(session, a) for a in agents.categories]
    out = pd.DataFrame(
        {
            "session": pd.Categorical.from_codes(np.zeros(n, np.int8), categories=[sid]),
            "source_format": pd.Categorical.from_codes(np.zeros(n, np.int8), categories=[session.format]),
            "agent": df["agent"],
            "parent_agent": _recode(agents.codes.to_numpy(), parents),
            "order": np.arange(n, dtype=np.int64),
            "lsn": _nullable(df["lsn"].to_numpy(), df["lsn"].to_numpy() < 0),
            "time": df["time"],
            "day": df["time"].dt.floor("D"),
            "kind": df["kind"],
            "type": df["type"],
            "tool": df["tool"],
            "target": df["target"],
            "status": df["status"],
            "ref": _nullable(df["ref"].to_numpy(), df["ref"].to_numpy() < 0),
        }
    )
    out = pd.concat([out, detail_columns(session)], axis=1)
    src = np.frombuffer(t.src, np.uint32)[:n] if n else np.zeros(0, np.uint32)
    line = np.frombuffer(t.line, np.uint32)[:n].astype(np.int64) if n else np.zeros(0, np.int64)
    out["source_file"] = _recode(src.astype(np.int64), [str(s.path.resolve()) for s in session.sources])
    out["source_line"] = _nullable(line, line == 0)
    return out[list(COLUMNS)]


def _parent(session: Session, agent: str) -> str | None:
    a = session.agents.get(agent)
    return a.parent if a is not None else None


def _nulls_for_empty(col: pd.Series) -> pd.Series:
    """An empty string is "not given": null in the tables."""
    if "" in col.cat.categories:
        return col.cat.remove_categories([""])
    return col


def _recode(codes: np.ndarray, labels: list[str | None]) -> pd.Categorical:
    """The categorical whose row ``k`` is ``labels[codes[k]]`` (None: null), built on codes only."""
    import pandas as pd

    cats: dict[str, int] = {}
    remap = np.array([-1 if v is None else cats.setdefault(v, len(cats)) for v in labels] or [-1], np.int32)
    return pd.Categorical.from_codes(
        remap[codes] if len(codes) else np.zeros(0, np.int32), categories=pd.Index(list(cats), dtype=object)
    )


def _strings(values: list[str | None]) -> pd.Categorical:
    """A categorical of strings (None: null) whose categories are strings even when all are null."""
    import pandas as pd

    return pd.Categorical(
        values, categories=pd.Index(sorted({v for v in values if v is not None}), dtype=object)
    )


def _nullable(values: np.ndarray, missing: np.ndarray) -> pd.arrays.IntegerArray:
    import pandas as pd

    return pd.arrays.IntegerArray(values.astype(np.int64, copy=False), missing.copy())


def detail_columns(session: Session) -> pd.DataFrame:
    """model, input/output tokens and file pre/post hashes, from the details of the events that
    have them (every other row null)."""
    import pandas as pd

    n = len(session)
    t = session.table
    kind = np.frombuffer(t.kind, np.uint8)[:n] if n else np.zeros(0, np.uint8)
    flags = np.frombuffer(t.flags, np.uint8)[:n] if n else np.zeros(0, np.uint8)
    models = (kind == KIND_INDEX["model_result"]) | (kind == KIND_INDEX["model_call"])
    edits = (kind == KIND_INDEX["tool_call"]) & (flags & FILE != 0)
    model: list[str | None] = [None] * n
    pre: list[str | None] = [None] * n
    post: list[str | None] = [None] * n
    tokens = np.zeros((2, n), np.int64)
    known = np.zeros((2, n), bool)
    for i, d in details(session, np.flatnonzero(models | edits)):
        if isinstance(d, ModelResult):
            model[i] = d.model or None
            for k, v in enumerate((d.usage.input_tokens, d.usage.output_tokens)):
                if v is not None:
                    tokens[k, i], known[k, i] = v, True
        elif isinstance(d, ModelCall):
            model[i] = d.model or None
        elif isinstance(d, ToolCall) and d.edit is not None:
            pre[i], post[i] = d.edit.pre, d.edit.post
    return pd.DataFrame(
        {
            "model": _strings(model),
            "input_tokens": _nullable(tokens[0], ~known[0]),
            "output_tokens": _nullable(tokens[1], ~known[1]),
            "file_pre": _strings(pre),
            "file_post": _strings(post),
        }
    )


# -- writers ------------------------------------------------------------------------------------
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
            folder = out / f"source_format={_escape(fmt)}" / f"day={_escape(_date(day))}"
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
    import pandas as pd

    return None if pd.isna(day) else pd.Timestamp(day).strftime("%Y-%m-%d")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _file_name(sid: str) -> str:
    return _UNSAFE.sub("_", sid)[:200] + ".parquet"


def _escape(value: str | None) -> str:
    """A partition value as a folder name (hive escaping of what a path cannot hold)."""
    if value is None:
        return NULL_PARTITION
    return re.sub(r"[^A-Za-z0-9._ -]", lambda m: f"%{ord(m.group()):02X}", str(value))


class CsvExporter:
    """``walkback export csv``: one row per event, every session of PATH in one file."""

    name = "csv"
    suffix = ".csv"
    extra = None
    options: tuple[Option, ...] = ()

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        return write_csv([session], Path(out))

    def export_many(self, sessions: Iterable[Session], out: Path, **options: Any) -> Path:
        return write_csv(sessions, Path(out))


class ParquetExporter:
    """``walkback export parquet``: a session as a Parquet file; several as a partitioned dataset."""

    name = "parquet"
    suffix = ".parquet"
    extra = "parquet"
    options: tuple[Option, ...] = ()

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        if Path(out).is_dir():
            return write_dataset([session], Path(out))
        return write_parquet(session, Path(out))

    def export_many(self, sessions: Iterable[Session], out: Path, **options: Any) -> Path:
        return write_dataset(sessions, Path(out))


CSV = CsvExporter()
PARQUET = ParquetExporter()
