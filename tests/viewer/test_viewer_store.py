"""SessionStore: discovering a folder of runs, background loading, live follow, recovery analysis."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sample_runs import build_run, grow
from walkback.journal.recovery import analyze
from walkback.viewer.app import ViewerError, make_store
from walkback.viewer.store import SessionStore, entry_id

from walkback import importers


def test_a_folder_of_runs_becomes_a_session_list(tmp_path: Path) -> None:
    a = build_run(tmp_path, name="run-a")
    b = build_run(tmp_path, name="run-b", crashed=False)
    (tmp_path / "notes.txt").write_text("not a journal\n")
    (tmp_path / "loose.jsonl").write_bytes(a.journal.read_bytes())
    store = make_store([tmp_path])
    paths = sorted(e.path.name for e in store.entries.values())
    # run dirs and the loose journal; not the text file, the workspaces or the subagent dirs
    assert paths == ["loose.jsonl", "run-a", "run-b"]
    assert all(len(sid) == 12 and all(ch in "0123456789abcdef" for ch in sid) for sid in store.entries)
    assert entry_id(b.dir) in store.entries and entry_id(b.dir) == entry_id(tmp_path / "x" / ".." / "run-b")


def test_nothing_to_show_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ViewerError, match="no journal or known agent log"):
        make_store([tmp_path / "empty"])
    with pytest.raises(ViewerError, match="no such file"):
        make_store([tmp_path / "missing"])


def test_background_loading_fills_summaries_and_reports_errors(tmp_path: Path) -> None:
    run = build_run(tmp_path, recovered=True, torn=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"[1, 2, 3]\n")
    store = SessionStore([run.dir, bad], loader=importers.load)
    store.start()
    try:
        for e in store.entries.values():
            assert store.wait(e, timeout=30)
    finally:
        store.stop()
    good, broken = store.get(entry_id(run.dir)), store.get(entry_id(bad))
    assert good is not None and good.summary is not None
    s = good.summary
    # 26 records and the torn line's placeholder row
    assert (s.events, s.agents, s.status, s.recovered, s.integrity) == (27, 2, "crashed", True, "torn tail")
    assert s.start is not None and s.duration is not None and s.duration >= 0
    assert (
        good.derived is not None and good.derived.approvals is not None and len(good.derived.approvals) == 2
    )
    assert broken is not None and broken.session is None and str(bad) in broken.error


def test_live_follow_reloads_a_growing_journal(tmp_path: Path) -> None:
    run = build_run(tmp_path, crashed=True)
    store = SessionStore([run.dir], loader=importers.load)
    e = next(iter(store.entries.values()))
    store.load_now(e)
    n, v = len(e.session), e.version
    store.start()
    try:
        store.poll()
        time.sleep(0.2)
        assert e.version == v, "nothing changed: no reload"
        grow(run, 3)
        deadline = time.monotonic() + 5
        while len(e.session) == n and time.monotonic() < deadline:
            store.poll()
            time.sleep(0.1)
    finally:
        store.stop()
    assert len(e.session) == n + 3 and e.version > v


def test_crashed_runs_get_the_recovery_analysis(tmp_path: Path) -> None:
    run = build_run(tmp_path, crashed=True)
    store = SessionStore([run.dir], loader=importers.load, analyzer=analyze)
    e = next(iter(store.entries.values()))
    store.load_now(e)
    assert e.analysis is not None and not e.analysis.error and e.analysis.plan is not None
    plan = e.analysis.plan
    pending = [f for f in plan.all_findings() if f.target == "docs/notes.md"]
    assert len(pending) == 1 and pending[0].finding == "not_applied" and pending[0].action == "redo"
    assert "docs/notes.md" in plan.brief or str(pending[0].lsn) in plan.brief
    done = build_run(tmp_path, name="done", crashed=False)
    store2 = SessionStore([done.dir], loader=importers.load, analyzer=analyze)
    e2 = next(iter(store2.entries.values()))
    store2.load_now(e2)
    assert e2.analysis is None


def test_big_sessions_read_only_for_the_list_keep_just_their_summary(tmp_path: Path, monkeypatch) -> None:
    from walkback.viewer import store as store_module

    monkeypatch.setattr(store_module, "KEEP_UNVIEWED", 10)
    a = build_run(tmp_path, name="run-a")
    b = build_run(tmp_path, name="run-b")
    store = SessionStore([a.dir, b.dir], loader=importers.load)
    ea, eb = store.get(entry_id(a.dir)), store.get(entry_id(b.dir))
    assert ea is not None and eb is not None
    store.request(eb)  # a page asked for run-b
    store.start()
    try:
        deadline = time.monotonic() + 20
        while (
            ea.summary is None or eb.derived is None or eb.derived.approvals is None
        ) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        store.stop()
    assert ea.summary is not None and ea.summary.events == 24 and ea.session is None
    assert eb.session is not None and eb.viewed
