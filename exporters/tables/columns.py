"""The rows of the tabular exports: one per event, :data:`COLUMNS` (docs/exports.md).

Every column is built from arrays, never event by event: the timeline's own columns as they are,
and model, tokens and file hashes from the session's measures (:mod:`timeline.measures`, recorded
by the importer or measured from the details). They are built once in a neutral form,
:class:`Column` (numpy values or string codes, and a null mask), which :func:`rows` turns into a
pandas DataFrame (CSV) and ``write.arrow_table`` into Arrow (Parquet), so both say the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from walkback.timeline.facts import measures, session_id
from walkback.timeline.frame import compact
from walkback.timeline.kinds import KINDS
from walkback.timeline.query import columns as table_columns
from walkback.timeline.session import Session

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
DAY_US = 86_400_000_000
_EARLIEST, _LATEST = -62_135_596_800.0, 253_402_300_800.0
"""Seconds since the epoch of 0001-01-01 and 10000-01-01: a time outside is no date (null)."""


@dataclass(frozen=True)
class Column:
    """One column: ``string`` (``values`` codes into ``labels``), ``int`` (int64), ``time``
    (microseconds since the epoch, UTC) or ``day`` (days since the epoch); ``missing`` marks nulls."""

    type: Literal["string", "int", "time", "day"]
    values: np.ndarray
    missing: np.ndarray
    labels: Sequence[str] = ()


def columns(session: Session) -> dict[str, Column]:
    """Every column of :data:`COLUMNS` for the session's events, in order."""
    n = len(session)
    pool = session.table.pool.values
    t = table_columns(session)
    agents = _pooled(t.agent, pool)
    timeless = ~((t.ts > _EARLIEST) & (t.ts < _LATEST))  # NaN included
    micros = np.where(timeless, 0, np.round(t.ts * 1e6)).astype(np.int64)
    line = t.line.astype(np.int64)
    return {
        "session": _constant(n, session_id(session)),
        "source_format": _constant(n, session.format),
        "agent": agents,
        "parent_agent": _labelled(agents.values, [_parent(session, a) for a in agents.labels]),
        "order": Column("int", np.arange(n, dtype=np.int64), np.zeros(n, bool)),
        "lsn": _ints(t.lsn),
        "time": Column("time", micros, timeless),
        "day": Column("day", (micros // DAY_US).astype(np.int32), timeless),
        "kind": Column("string", t.kind.astype(np.int32), np.zeros(n, bool), KINDS),
        **{name: _pooled(getattr(t, name), pool) for name in ("type", "tool", "target", "status")},
        "ref": _ints(t.ref),
        **_measured(session),
        "source_file": _labelled(t.src.astype(np.int32), [str(s.path.resolve()) for s in session.sources]),
        "source_line": Column("int", line, line == 0),
    }


def rows(session: Session) -> pd.DataFrame:
    """One row per event with :data:`COLUMNS`: strings categorical, absent values null."""
    return pd.DataFrame({name: _pandas(c) for name, c in columns(session).items()})


def _measured(session: Session) -> dict[str, Column]:
    """model, input/output tokens and file pre/post hashes: null but for the measured events."""
    n = len(session)
    m = measures(session)
    at = np.frombuffer(m.index, np.int64) if len(m) else np.zeros(0, np.int64)

    def spread(values: Any, dtype: Any, absent: int) -> np.ndarray:
        """A measures column as one value per event (``absent`` for the unmeasured)."""
        out = np.full(n, absent, dtype)
        out[at] = np.frombuffer(values, dtype) if len(m) else absent
        return out

    return {
        "model": _pooled(spread(m.model, np.uint32, 0), session.table.pool.values),
        "input_tokens": _ints(spread(m.input, np.int64, -1)),
        "output_tokens": _ints(spread(m.output, np.int64, -1)),
        "file_pre": _pooled(spread(m.pre, np.uint32, 0), m.hashes.values),
        "file_post": _pooled(spread(m.post, np.uint32, 0), m.hashes.values),
    }


def _pooled(ids: np.ndarray, values: list[str]) -> Column:
    """Ids in a string pool as a column of only the strings used, the empty string ("not given")
    null."""
    codes, used = compact(ids, len(values), empty=False)
    return Column("string", codes, codes < 0, [values[k] for k in used.tolist()])


def _parent(session: Session, agent: str) -> str | None:
    a = session.agents.get(agent)
    return a.parent if a is not None else None


def _constant(n: int, value: str) -> Column:
    return Column("string", np.zeros(n, np.int32), np.zeros(n, bool), [value])


def _ints(values: np.ndarray) -> Column:
    """A column of numbers where -1 is "none"."""
    return Column("int", values, values < 0)


def _labelled(codes: np.ndarray, labels: list[str | None]) -> Column:
    """Row ``k`` is ``labels[codes[k]]`` (None or a negative code: null), repeated labels merged."""
    merged: dict[str, int] = {}
    remap = np.array(
        [-1 if v is None else merged.setdefault(v, len(merged)) for v in labels] + [-1], np.int32
    )
    out = remap[codes]  # code -1 reads the trailing -1
    return Column("string", out, out < 0, list(merged))


def _pandas(c: Column) -> pd.api.extensions.ExtensionArray | pd.Series:
    if c.type == "string":
        return pd.Categorical.from_codes(
            np.where(c.missing, -1, c.values), categories=pd.Index(list(c.labels), dtype=object)
        )
    if c.type == "int":
        return pd.arrays.IntegerArray(c.values.astype(np.int64, copy=False), c.missing.copy())
    unit = "datetime64[us]" if c.type == "time" else "datetime64[D]"
    times = c.values.astype(unit)
    times[c.missing] = np.datetime64("NaT")
    return pd.Series(times.astype("datetime64[us]")).dt.tz_localize("UTC")
