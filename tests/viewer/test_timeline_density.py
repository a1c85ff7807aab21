"""The timeline chart of a session with more events than it draws one by one: each lane shows how
many events fall in each time bin, counted from every event (or every event of the zoomed range),
and the problems are still drawn one by one, where their agent's lane and kind put them."""

from __future__ import annotations

import numpy as np
import pytest
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import Detail, Other
from walkback.timeline.query import problems_mask
from walkback.timeline.session import Session
from walkback.viewer.components.timeline_chart import (
    CATEGORY_OF,
    DENSITY_BINS,
    MAX_MARKERS,
    ROW_OF_KIND,
    Axis,
    traces,
)

N = 5 * MAX_MARKERS + 1
T0 = 1_700_000_000.0


def _describe(session: Session, i: int) -> Detail:
    return Other()


@pytest.fixture(scope="module")
def session() -> Session:
    """Two agents: ``main`` every 0.5 s from T0, ``sub`` every 2 s in the second half of that time;
    every 500th call of ``main`` failed."""
    b = SessionBuilder("synthetic", describe=_describe)
    b.agent("main")
    b.agent("sub", parent="main")
    for k in range(N):
        status = "failed" if k % 500 == 499 else "ok"
        b.add("tool_call", type="call", agent="main", tool="run", status=status, ts=T0 + k * 0.5)
        if k % 4 == 0 and k >= N // 2:
            b.add("model_result", type="result", agent="sub", ts=T0 + k * 0.5 + 0.25)
    return b.finish()


def counts(trace: dict) -> np.ndarray:
    return np.nan_to_num(np.asarray(trace["z"], dtype=np.float64)).astype(np.int64)


def test_every_event_is_counted_once_in_its_lane_and_bin(session: Session) -> None:
    axis = Axis(session)
    out, dense = traces(session, axis)
    assert dense
    [density] = [t for t in out if t["name"] == "density"]
    z = counts(density)
    assert z.shape == (2, DENSITY_BINS) and axis.lanes == ["main", "sub"]
    assert z[0].sum() == N and z[1].sum() == len(session) - N
    # main's events are evenly spread: every bin holds about N / DENSITY_BINS of them
    assert z[0].min() >= N // DENSITY_BINS - 1 and z[0].max() <= N // DENSITY_BINS + 2
    # sub's start halfway: its first bins are empty (shown blank, not as zero)
    assert z[1][: DENSITY_BINS // 2 - 1].sum() == 0 and z[1][-1] > 0
    assert np.isnan(np.asarray(density["z"], dtype=np.float64)[1][0])
    # the bins' centres span the session's time, in ms
    x = np.asarray(density["x"])
    assert len(x) == DENSITY_BINS and T0 * 1000 < x[0] < x[-1] < axis.x.max()


def test_a_zoomed_range_counts_only_its_events(session: Session) -> None:
    axis = Axis(session)
    lo, hi = float(axis.x[0]), float(axis.x[0]) + N * 500 / 4  # the first quarter of main's time
    inside = int(((axis.x >= lo) & (axis.x <= hi)).sum())
    assert inside > MAX_MARKERS
    out, dense = traces(session, axis, (lo, hi))
    [density] = [t for t in out if t["name"] == "density"]
    z = counts(density)
    assert dense and z.sum() == inside and z[1].sum() == 0  # sub had not started yet
    assert np.asarray(density["x"])[-1] < hi


def test_problems_are_still_drawn_one_by_one_in_their_lane_and_row(session: Session) -> None:
    axis = Axis(session)
    out, _ = traces(session, axis)
    [problem] = [t for t in out if t["name"] == "problem"]
    bad = np.flatnonzero(problems_mask(session))
    assert len(bad) == N // 500
    assert list(problem["customdata"]) == list(bad + 1)
    kind = np.frombuffer(session.table.kind, dtype=np.uint8)[bad]
    assert np.allclose(problem["y"], ROW_OF_KIND[kind])  # main is lane 0
    assert all(CATEGORY_OF[k] == CATEGORY_OF[kind[0]] for k in kind)
    assert np.allclose(problem["x"], axis.x[bad])
    assert axis.y(int(bad[0])) == problem["y"][0]
