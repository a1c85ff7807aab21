"""The events of a session as a pandas DataFrame: one row per event, categorical strings.

The table columns as they are (zero-copy numpy views under the categoricals), for filtering and
analysis; :func:`column` and :func:`compact` are the views and the renumbering the tabular exports
build on too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .kinds import KINDS
from .session import Session


def column(session: Session, name: str, dtype: Any) -> np.ndarray:
    """A column of the session's table as a numpy view (no copy)."""
    n = len(session.table)
    return np.frombuffer(getattr(session.table, name), dtype=dtype)[:n] if n else np.zeros(0, dtype)


def compact(ids: np.ndarray, size: int, *, empty: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Pool ids renumbered over only the strings they use: ``(codes, used)``, row ``k`` being pool
    string ``used[codes[k]]``; with ``empty=False`` the empty string (id 0) is code -1."""
    seen = np.zeros(size, dtype=bool)
    seen[ids] = True
    if not empty:
        seen[0] = False
    used = np.flatnonzero(seen)
    code = np.full(size, -1, dtype=np.int32)
    code[used] = np.arange(len(used), dtype=np.int32)
    return code[ids], used


def frame(session: Session) -> pd.DataFrame:
    """One row per event: kind, lsn, time, agent, type, tool, target, status, ref."""
    vals = np.array(session.table.pool.values, dtype=object)

    def cat(name: str) -> pd.Categorical:
        """Pool ids as a categorical of only the strings used (no per-event string objects)."""
        codes, used = compact(column(session, name, np.uint32), len(vals))
        return pd.Categorical.from_codes(codes, categories=pd.Index(vals[used], dtype=object))

    kinds = np.array(KINDS, dtype=object)
    return pd.DataFrame(
        {
            "kind": pd.Categorical(kinds[column(session, "kind", np.uint8)], categories=list(KINDS)),
            "lsn": column(session, "lsn", np.int64),
            "time": pd.to_datetime(column(session, "ts", np.float64), unit="s", utc=True),
            "agent": cat("agent"),
            "type": cat("type"),
            "tool": cat("tool"),
            "target": cat("target"),
            "status": cat("status"),
            "ref": column(session, "ref", np.int64),
        }
    )
