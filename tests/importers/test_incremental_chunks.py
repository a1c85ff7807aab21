"""The importer read in chunks: the same session as a whole read, growing a chunk at a time."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from walkback.journal.testing import synth_journal
from walkback.timeline.session import Session

from walkback import importers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "viewer"))
from sample_runs import build_run  # noqa: E402


def rows(s: Session) -> list[tuple[object, ...]]:
    """Every event as plain values (interned columns as strings, NaN times as None)."""
    t = s.table
    out = []
    for i in range(len(s)):
        ev = s.event(i)
        out.append(
            (
                ev.kind,
                ev.type,
                ev.lsn,
                ev.ts,
                ev.agent,
                ev.tool,
                ev.target,
                ev.status,
                ev.ref,
                ev.source,
                ev.line,
            )
            + (t.offset[i], t.length[i])
        )
    return out


def facts(s: Session) -> tuple[object, ...]:
    return (
        s.task,
        s.status,
        s.format,
        s.recovered,
        s.last_committed_lsn,
        s.gated,
        s.brief,
        s.recovery_findings,
        {k: vars(a) for k, a in s.agents.items()},
        vars(s.integrity),
    )


@pytest.mark.parametrize("chunk", [1, 2, 7])
@pytest.mark.parametrize("shape", ["crashed", "recovered-torn", "completed"])
def test_chunks_give_the_same_session_as_one_read(tmp_path: Path, chunk: int, shape: str) -> None:
    run = build_run(
        tmp_path, crashed=shape != "completed", recovered=shape == "recovered-torn", torn="torn" in shape
    )
    whole = importers.load(run.dir)
    seen = [len(s) for s in importers.load_chunks(run.dir, chunk=chunk)]
    *_, last = importers.load_chunks(run.dir, chunk=chunk)
    assert rows(last) == rows(whole) and facts(last) == facts(whole)
    # completions reach back into earlier chunks (with chunk=1 every intent is flushed before its commit)
    assert {r[7] for r in rows(last) if r[0] == "tool_call"} - {"pending"}
    assert seen == sorted(seen) and seen[-1] == len(whole) and len(seen) > len(whole) // chunk // 2


def test_each_yield_holds_whole_chunks_and_later_ones_add_to_it(tmp_path: Path) -> None:
    path = tmp_path / "run" / "journal.jsonl"
    path.parent.mkdir()
    synth_journal(path, 1000)
    sizes = []
    yielded = set()
    for s in importers.load_chunks(path, chunk=300):
        yielded.add(id(s))
        sizes.append(len(s))
    assert sizes == [300, 600, 900, 1000] and len(yielded) == 1  # one session, growing
    assert s.task and s.integrity.chain == "ok" and s.status != "pending"
    ts = s.table.ts
    assert all(not math.isnan(x) for x in ts) and list(ts) == sorted(ts)
