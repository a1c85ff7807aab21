"""A rotated journal imports as one run: one agent, one run id, every event counted, links across
segment files kept, and damage inside an archived segment reported as a broken chain."""

from __future__ import annotations

from pathlib import Path

from walkback.importers import load
from walkback.journal import JournalWriter
from walkback.journal.segments import archived


def _rotated(run: Path) -> tuple[JournalWriter, int]:
    """Two archived segments; the live file commits an intent that was written before the last rotation."""
    w = JournalWriter.create(run, task="rotated", workspace=str(run.parent))
    for _ in range(2):
        lsn = w.append("intent", tool="write_file", args={"path": "a"}, target="a", effect="fs",
                       pre="absent", post="absent")
        w.append("commit", ref=lsn, post="absent", verified={"post": True})
        w.append("checkpoint", git="0" * 40, branch="walkback/x", covers_lsn=w.next_lsn)
        assert w.rotate(1) is not None
    open_lsn = w.append("agent.spawn", child_run=f"{w.run}:x", child_agent="kid", child_dir="agents/kid",
                        task="t")  # fmt: skip
    w.append("checkpoint", git="1" * 40, branch="walkback/x", covers_lsn=w.next_lsn)
    assert w.rotate(1) is not None
    w.append("agent.end", ref=open_lsn, child_agent="kid", child_run=f"{w.run}:x", outcome="completed")
    w.append("run.end", status="completed")
    w.close()
    return w, open_lsn


def test_a_rotated_journal_is_one_run_with_every_event(tmp_path: Path) -> None:
    w, spawn_lsn = _rotated(tmp_path / "run")
    assert len(archived(w.path)) == 3
    s = load(tmp_path / "run")
    assert s.runs == [w.run]
    assert list(s.agents) == ["main"]
    assert s.agents["main"].events == len(s) == w.next_lsn  # continued headers are events too
    assert [e.lsn for e in s.events()] == list(range(w.next_lsn))
    assert s.kinds()["integrity"] == 3  # one journal.continued per rotation
    assert s.integrity.chain == "ok" and s.integrity.corrupt == []
    assert s.status == "completed" and s.task == "rotated"
    spawn = s.index_of_lsn(spawn_lsn)
    assert spawn is not None and s.event(spawn).status == "completed"  # its agent.end is in the next file


def test_damage_inside_an_archived_segment_breaks_the_chain(tmp_path: Path) -> None:
    w, _ = _rotated(tmp_path / "run")
    first = archived(w.path)[0].path
    lines = first.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"write_file"', b'"write_fil3"')
    first.write_bytes(b"".join(lines))
    s = load(tmp_path / "run")
    assert s.integrity.chain == "broken"
    assert s.integrity.corrupt and s.integrity.corrupt[0]["file"] == str(first)
    assert s.integrity.first_bad_lsn == 1
