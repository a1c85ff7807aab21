"""The events of a session as a pandas DataFrame: one row per event, categorical strings.

The table columns as they are (zero-copy numpy views under the categoricals), for filtering,
charts and the tabular exports.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .kinds import KINDS
from .session import Session


def frame(session: Session) -> pd.DataFrame:
    """One row per event: kind, lsn, time, agent, type, tool, target, status, ref."""
    t = session.table
    n = len(t)
    vals = np.array(t.pool.values, dtype=object)

    def view(col: Any, dtype: Any) -> np.ndarray:
        return np.frombuffer(col, dtype=dtype)[:n] if n else np.zeros(0, dtype)

    def cat(col: Any) -> pd.Categorical:
        """Pool ids as a categorical of only the strings used (no per-event string objects)."""
        ids = view(col, np.uint32)
        used = np.zeros(len(vals), dtype=bool)
        used[ids] = True
        present = np.flatnonzero(used)
        code = np.full(len(vals), -1, dtype=np.int32)
        code[present] = np.arange(len(present), dtype=np.int32)
        return pd.Categorical.from_codes(code[ids], categories=pd.Index(vals[present], dtype=object))

    kinds = np.array(KINDS, dtype=object)
    return pd.DataFrame(
        {
            "kind": pd.Categorical(kinds[view(t.kind, np.uint8)], categories=list(KINDS)),
            "lsn": view(t.lsn, np.int64),
            "time": pd.to_datetime(view(t.ts, np.float64), unit="s", utc=True),
            "agent": cat(t.agent),
            "type": cat(t.type),
            "tool": cat(t.tool),
            "target": cat(t.target),
            "status": cat(t.status),
            "ref": view(t.ref, np.int64),
        }
    )
