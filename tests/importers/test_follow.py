"""Live follow: a session extended with what its journals appended equals the session read again
whole, and costs only the new records (the scan resumes from its verified end)."""

from __future__ import annotations

from pathlib import Path

from walkback.importers import extend, load
from walkback.journal import JournalWriter


def _facts(s):  # type: ignore[no-untyped-def]
    events = sorted((e.agent, e.lsn, e.kind, e.type, e.status, e.target) for e in s.events())
    pairs = sorted(
        (s.event(i).agent, s.event(i).lsn, s.event(j).lsn)
        for i in range(len(s)) if (j := s.completion_of(i)) is not None
    )
    agents = {a.id: (a.parent, a.events, a.outcome) for a in s.agents.values()}
    return events, pairs, agents, s.status, s.integrity.chain, s.last_committed_lsn


def _intent(w: JournalWriter, k: int) -> int:
    return w.append("intent", tool="write_file", target=f"f{k}.txt", effect="fs", pre="absent",
                    post="absent", step=k)


def test_an_extended_session_equals_the_session_read_again(tmp_path: Path) -> None:
    w = JournalWriter.create(tmp_path / "run", task="follow me", run="R", group_interval=0)
    for k in range(5):
        w.append("commit", ref=_intent(w, k), post="absent", verified={"post": True})
    w.flush() if hasattr(w, "flush") else None
    first = load(tmp_path / "run")
    open_lsn = _intent(w, 5)
    w.append("commit", ref=open_lsn, post="absent", verified={"post": True})
    pending = _intent(w, 6)
    w.close()
    grown = extend(first)
    assert grown is not None and grown is not first
    assert len(first) == 11, "the session extended is a copy: the one read before is untouched"
    assert _facts(grown) == _facts(load(tmp_path / "run"))
    assert grown.pending() == [grown.index_of_lsn(pending)]


def test_a_subagent_spawned_after_the_read_is_read_whole(tmp_path: Path) -> None:
    parent = JournalWriter.create(tmp_path / "run", task="fan out", run="R", group_interval=0)
    spawn = parent.append("agent.spawn", child_run="R:1", child_agent="a1", child_dir="agents/a1", task="sub")
    first = load(tmp_path / "run")  # the child has no journal yet
    child = JournalWriter.create(tmp_path / "run" / "agents" / "a1", task="sub", run="R:1", agent="a1",
                                 parent={"run": "R", "lsn": spawn})
    ci = _intent(child, 0)
    child.append("commit", ref=ci, post="absent", verified={"post": True})
    child.append("run.end", status="completed")
    child.close()
    parent.append("agent.end", ref=spawn, child_agent="a1", child_run="R:1", outcome="completed")
    parent.append("run.end", status="completed")
    parent.close()
    second = extend(first)
    assert second is not None
    assert _facts(second) == _facts(load(tmp_path / "run"))
    assert second.agents["a1"].spawned_by is not None
    third = extend(second)  # nothing new: the same events
    assert third is not None and _facts(third) == _facts(second)


def test_a_rewritten_journal_is_read_again_whole(tmp_path: Path) -> None:
    w = JournalWriter.create(tmp_path / "run", task="t", run="R", group_interval=0)
    _intent(w, 0)
    w.close()
    first = load(tmp_path / "run")
    journal = tmp_path / "run" / "journal.jsonl"
    journal.write_bytes(journal.read_bytes()[:-5] + b"xxxx\n")  # bytes before the end changed
    assert extend(first) is None


def test_a_multi_agent_run_followed_through_its_growth_ends_as_read_whole(tmp_path: Path) -> None:
    """The demo's run, its journals cut to their first half, read (interleaved by time), then grown
    back in two steps and extended each time: the same session as the full read."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    run = tmp_path / "demo"
    shutil.copytree(root / "samples" / "demo", run)
    journals = sorted(run.rglob("journal.jsonl"))
    full = {p: p.read_bytes() for p in journals}

    def cut(fraction: float) -> None:
        for p, data in full.items():
            lines = data.splitlines(keepends=True)
            p.write_bytes(b"".join(lines[: max(1, int(len(lines) * fraction))]))

    cut(0.4)
    s = load(run)
    for fraction in (0.7, 1.0):
        cut(fraction)
        grown = extend(s)
        assert grown is not None
        s = grown
    assert _facts(s) == _facts(load(run))
