"""The events of a session as a pandas DataFrame: one row per event, categorical strings.

The table columns as they are (zero-copy numpy views, :func:`timeline.query.columns`, under the
categoricals), for filtering and analysis; :func:`compact` is the renumbering the tabular exports
build on too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .kinds import KINDS
from .query import columns
from .session import Session


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
    c = columns(session)

    def cat(ids: np.ndarray) -> pd.Categorical:
        """Pool ids as a categorical of only the strings used (no per-event string objects)."""
        codes, used = compact(ids, len(vals))
        return pd.Categorical.from_codes(codes, categories=pd.Index(vals[used], dtype=object))

    kinds = np.array(KINDS, dtype=object)
    return pd.DataFrame(
        {
            "kind": pd.Categorical(kinds[c.kind], categories=list(KINDS)),
            "lsn": c.lsn,
            "time": pd.to_datetime(c.ts, unit="s", utc=True),
            "agent": cat(c.agent),
            "type": cat(c.type),
            "tool": cat(c.tool),
            "target": cat(c.target),
            "status": cat(c.status),
            "ref": c.ref,
        }
    )
