"""The rows of the tabular exports: one per event, :data:`COLUMNS` (docs/exports.md).

They start from :func:`walkback.timeline.frame.frame` (the table's columns as they are, strings
categorical); model, tokens and file hashes come from typed details, built only for the events
that have them (model calls and results, tool calls that change a file).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from walkback.timeline.details import ModelCall, ModelResult, ToolCall
from walkback.timeline.frame import frame
from walkback.timeline.kinds import FILE, KIND_INDEX
from walkback.timeline.session import Session

from ..facts import details, session_id

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


def rows(session: Session) -> pd.DataFrame:
    """One row per event with :data:`COLUMNS`: strings categorical, absent values null."""
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
            "session": _recode(np.zeros(n, np.int64), [sid]),
            "source_format": _recode(np.zeros(n, np.int64), [session.format]),
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
    cats: dict[str, int] = {}
    remap = np.array([-1 if v is None else cats.setdefault(v, len(cats)) for v in labels] or [-1], np.int32)
    return pd.Categorical.from_codes(
        remap[codes] if len(codes) else np.zeros(0, np.int32), categories=pd.Index(list(cats), dtype=object)
    )


def _strings(values: list[str | None]) -> pd.Categorical:
    """A categorical of strings (None: null) whose categories are strings even when all are null."""
    return pd.Categorical(
        values, categories=pd.Index(sorted({v for v in values if v is not None}), dtype=object)
    )


def _nullable(values: np.ndarray, missing: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(values.astype(np.int64, copy=False), missing.copy())


def detail_columns(session: Session) -> pd.DataFrame:
    """model, input/output tokens and file pre/post hashes, from the details of the events that
    have them (every other row null)."""
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
