"""Segment rotation: archived segments plus a continued live file read as one chain, checked link by
link; a rotation killed at each of its failpoints is finished or undone when the journal is opened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from walkback.importers import load
from walkback.journal import OS, JournalWriter, read_records, scan
from walkback.journal.recovery import analyze
from walkback.journal.recovery._read import read_window
from walkback.journal.segments import SEGMENTS_DIR, archived, finish_rotation, list_segments, scan_run

ROOT = Path(__file__).resolve().parents[2]
ROTATE_FAILPOINTS = [f"rotate.after_{step}" for step in ("link", "next", "rename", "dir_fsync")]


def _steps(w: JournalWriter, n: int) -> None:
    """``n`` file intents with their commits, then a checkpoint (the safe point a rotation follows)."""
    for _ in range(n):
        lsn = w.append("intent", tool="write_file", args={"path": "a"}, target="a", effect="fs",
                       pre="absent", post="absent")
        w.append("commit", ref=lsn, post="absent", verified={"post": True})
    w.append("checkpoint", git="0" * 40, branch="walkback/x", covers_lsn=w.next_lsn)


def rotated_run(run: Path, rotations: int = 3) -> JournalWriter:
    """A run with ``rotations`` archived segments and a live file with a few records after them."""
    w = JournalWriter.create(run, task="t", workspace=str(run.parent), base_ref="abc")
    for _ in range(rotations):
        _steps(w, 3)
        assert w.rotate(1) is not None
    _steps(w, 1)
    return w


def check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "walkback", "check", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, check=False)


def test_rotation_archives_the_live_file_and_continues_the_chain(tmp_path: Path) -> None:
    run = tmp_path / "run"
    w = JournalWriter.create(run, task="t", workspace="/ws", base_ref="abc")
    _steps(w, 2)
    assert w.rotate(10 << 20) is None  # below the threshold: nothing happens
    last_h, last_lsn = w.last_h, w.next_lsn - 1
    seg = w.rotate(1)
    assert seg == run / SEGMENTS_DIR / f"{0:012d}-{last_lsn:012d}.jsonl"
    w.append("message", role="user", text="after")
    w.close()

    live = read_records(run)
    first = live[0][0].data
    assert first["type"] == "journal.continued" and first["lsn"] == last_lsn + 1 and first["prev"] == last_h
    assert first["segment"] == {"path": f"segments/{seg.name}", "first_lsn": 0, "last_lsn": last_lsn,
                                "last_h": last_h}
    header = read_records(seg)[0][0].data
    for key in ("journal_id", "task", "workspace", "base_ref", "producer", "run", "agent"):
        assert first[key] == header[key]
    res = live[1]
    assert res.intact and res.first_lsn == last_lsn + 1 and res.header == first
    assert res.last_lsn == last_lsn + 2
    assert not os.path.samefile(seg, run / "journal.jsonl")

    again = JournalWriter.open(run)  # appends to the live file, after the continued record
    assert (again.first_lsn, again.next_lsn) == (last_lsn + 1, last_lsn + 3)
    again.append("message", role="user", text="more")
    again.close()
    whole = scan_run(run)
    assert whole.intact and whole.records == last_lsn + 4
    assert [f.first_lsn for f in whole.files] == [0, last_lsn + 1]


def test_check_on_the_run_dir_verifies_every_segment_and_the_links(tmp_path: Path) -> None:
    rotated_run(tmp_path / "run").close()
    r = check("--json", tmp_path / "run")
    data = orjson.loads(r.stdout)
    assert r.returncode == 0 and data["ok"] and data["records"] == 28 and len(data["segments"]) == 3
    r = check(tmp_path / "run")
    assert r.returncode == 0 and "3 archived segment(s)" in r.stdout


def _damage_middle_line(path: Path) -> int:
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"commit"', b'"cOmmit"')
    path.write_bytes(b"\n".join(lines))
    return 3


def test_check_names_the_damaged_segment_and_line(tmp_path: Path) -> None:
    rotated_run(tmp_path / "run").close()
    seg = list_segments(tmp_path / "run")[1].path
    line = _damage_middle_line(seg)
    r = check(tmp_path / "run")
    assert r.returncode == 1
    assert f"{seg}:{line}: corrupt" in r.stderr
    assert not scan_run(tmp_path / "run").intact
    data = orjson.loads(check("--json", tmp_path / "run").stdout)
    assert data["corrupt"][0]["file"] == str(seg) and data["corrupt"][0]["line"] == line


@pytest.mark.parametrize("which", [0, 1, 2])
def test_check_finds_a_missing_segment(tmp_path: Path, which: int) -> None:
    rotated_run(tmp_path / "run").close()
    segs = list_segments(tmp_path / "run")
    segs[which].path.unlink()
    r = check(tmp_path / "run")
    assert r.returncode == 1 and "broken link" in r.stderr
    after = segs[which + 1].path if which + 1 < len(segs) else tmp_path / "run" / "journal.jsonl"
    assert f"{after}:1: broken link" in r.stderr
    assert ("segments before it are missing" if which == 0 else "missing") in r.stderr


def test_losing_the_whole_segments_directory_is_damage_not_a_short_intact_journal(tmp_path: Path) -> None:
    import shutil

    rotated_run(tmp_path / "run").close()
    shutil.rmtree(tmp_path / "run" / SEGMENTS_DIR)
    live = tmp_path / "run" / "journal.jsonl"
    r = check(tmp_path / "run")
    assert r.returncode == 1, r.stdout
    assert f"{live}:1: corrupt (lsn 24): journal.continued follows segments/" in r.stderr
    assert "which is missing (lsn 16..23 are lost)" in r.stderr
    data = orjson.loads(check("--json", tmp_path / "run").stdout)
    assert not data["ok"] and data["chain"] == "broken"
    session = load(tmp_path / "run")
    assert session.integrity.chain == "broken" and "missing" in session.integrity.corrupt[0]["reason"]
    rec = subprocess.run([sys.executable, "-m", "walkback", "recover", str(tmp_path / "run")], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert rec.returncode == 1 and "which is missing" in rec.stderr


def test_check_finds_reordered_and_foreign_segments(tmp_path: Path) -> None:
    rotated_run(tmp_path / "run").close()
    a, b = (s.path for s in list_segments(tmp_path / "run")[:2])
    tmp = a.with_suffix(".tmp")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)  # contents swapped under their names
    r = check(tmp_path / "run")
    assert r.returncode == 1 and "renamed or reordered" in r.stderr

    rotated_run(tmp_path / "other").close()
    rotated_run(tmp_path / "run2").close()
    mine = list_segments(tmp_path / "run2")[1].path
    mine.write_bytes(list_segments(tmp_path / "other")[1].path.read_bytes())  # same lsns, other journal
    r = check(tmp_path / "run2")
    assert r.returncode == 1 and "another journal" in r.stderr and f"{mine}:1" in r.stderr


def test_the_importer_shows_every_event_in_lsn_order_across_segments(tmp_path: Path) -> None:
    rotated_run(tmp_path / "run").close()
    session = load(tmp_path / "run")
    t = session.table
    lsns = [t.lsn[i] for i in range(len(t))]
    assert lsns == list(range(28))
    assert [p.name for p in session.files()] == [s.path.name for s in list_segments(tmp_path / "run")] + [
        "journal.jsonl"
    ]
    assert session.task == "t" and session.status == "crashed"  # no run.end was written


def test_recovery_reads_only_the_live_file_after_a_rotation(tmp_path: Path) -> None:
    w = rotated_run(tmp_path / "run")
    assert w.rotate(1) is not None  # the live file holds no checkpoint now: recovery reads all of it
    w.append("intent", tool="write_file", args={"path": "b"}, target="b", effect="fs", pre="absent",
             post="absent")
    w.close()
    live = tmp_path / "run" / "journal.jsonl"
    win = read_window(live)
    assert win.scan.records == len(read_records(live)[0]) == 2 and win.scan.first_lsn == 28
    assert win.header["type"] == "journal.continued" and win.header["workspace"] == str(tmp_path)
    assert [p.lsn for p in win.pending] == [29] and win.next_lsn == 30 and win.start_lsn is None
    plan = analyze(tmp_path / "run")
    assert plan.next_lsn == 30 and [f.lsn for f in plan.findings] == [29]


ROTATE = """
import sys
from walkback.journal import JournalWriter
w = JournalWriter.open(sys.argv[1])
w.rotate(1)
"""


@pytest.mark.parametrize("fp", ROTATE_FAILPOINTS)
def test_a_rotation_killed_at_each_failpoint_is_finished_or_undone_on_open(tmp_path: Path, fp: str) -> None:
    run = tmp_path / "run"
    rotated_run(run, rotations=1).close()
    before: list[dict[str, object]] = []
    scan_run(run, on_record=lambda _f, rec: before.append(rec.data))
    env = {**os.environ, "WALKBACK_FAILPOINT": fp}
    p = subprocess.run([sys.executable, "-c", ROTATE, str(run)], env=env, cwd=ROOT, check=False)
    assert p.returncode == -9
    live = run / "journal.jsonl"
    # mid-rotation the live file is always there and readable; the half-made segment is not archived
    assert scan(live).intact
    assert len(archived(live)) == (1 if fp in ("rotate.after_link", "rotate.after_next") else 2)
    assert read_window(live).scan.intact
    outcome = finish_rotation(live)
    assert outcome == {"rotate.after_link": "back", "rotate.after_next": "forward"}.get(fp, "none")
    assert not (run / "journal.jsonl.next").exists()
    whole: list[dict[str, object]] = []
    res = scan_run(run, on_record=lambda _f, rec: whole.append(rec.data))
    assert res.intact and len(res.files) == (2 if outcome == "back" else 3)
    assert [d for d in whole if d["type"] != "journal.continued"] == [
        d for d in before if d["type"] != "journal.continued"
    ]
    w = JournalWriter.open(run)
    _steps(w, 1)
    w.rotate(1)
    w.close()
    assert scan_run(run).intact


def test_a_stale_next_file_is_dropped_when_the_live_file_moved_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    live = run / "journal.jsonl"
    rotated_run(run, rotations=1).close()
    env = {**os.environ, "WALKBACK_FAILPOINT": "rotate.after_next"}
    subprocess.run([sys.executable, "-c", ROTATE, str(run)], env=env, cwd=ROOT, check=False)
    res = scan(live)
    # a recovery appends to the live file before the resume opens it (as journal.recovery does)
    w = JournalWriter(live, OS.open_append(live), run="r", agent="main", dialect="v1",
                      next_lsn=res.last_lsn + 1, last_h=str(res.last_h), ops=OS, group_interval=0)
    w.append("recovery", ref=1, target="a", tool="write_file", finding="applied", action="commit", detail="")
    w.close()
    assert finish_rotation(live) == "back"  # .next no longer continues the live file
    assert scan_run(run).intact and len(archived(live)) == 1 and scan(live).last_lsn == res.last_lsn + 1
