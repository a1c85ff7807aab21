"""Resuming a scan from a finished one's state: only the appended records are read, with the chain
state carried, and a file that is no longer the one scanned is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from walkback.journal import JournalChanged, JournalWriter, Scanner, ScanState, scan
from walkback.journal.testing import write_run


def finished(
    path: Path, state: ScanState | None = None
) -> tuple[list[tuple[int, int, int, int | None]], Scanner]:
    s = Scanner(path, resume=state)
    got = [(r.lsn, r.offset, r.line, r.closes) for r in s]
    return got, s


def append_steps(run_dir: Path, n: int) -> None:
    with JournalWriter.open(run_dir) as w:
        for i in range(n):
            intent = w.append(
                "intent", tool="write_file", args={"path": f"n{i}"}, target=f"n{i}", effect="fs"
            )
            w.append("commit", ref=intent, post="absent")


def test_a_resumed_scan_yields_only_the_new_records_and_ends_where_a_full_scan_ends(run_dir: Path) -> None:
    _, first = finished(run_dir)
    before = first.result.records
    append_steps(run_dir, 50)
    got, resumed = finished(run_dir, first.state)
    full, whole = finished(run_dir)
    assert got == full[before:] and len(got) == 100
    assert [c for *_, c in got[1::2]] == [lsn for lsn, *_ in got[0::2]]  # each commit closes its intent
    a, b = resumed.result, whole.result
    assert (a.records, a.last_lsn, a.last_h, a.valid_end, a.valid_line, a.intact, a.header) == (
        b.records,
        b.last_lsn,
        b.last_h,
        b.valid_end,
        b.valid_line,
        b.intact,
        b.header,
    )


def test_a_state_can_be_resumed_from_again_and_a_resumed_scan_has_its_own(run_dir: Path) -> None:
    _, first = finished(run_dir)
    append_steps(run_dir, 3)
    once, r1 = finished(run_dir, first.state)
    twice, _ = finished(run_dir, first.state)
    assert once == twice and len(once) == 6
    append_steps(run_dir, 2)
    more, r3 = finished(run_dir, r1.state)
    assert [lsn for lsn, *_ in more] == list(range(once[-1][0] + 1, once[-1][0] + 5))
    assert r3.result.intact and finished(run_dir, r3.state)[0] == []


def test_a_half_written_last_line_is_read_again_once_complete(run_dir: Path) -> None:
    path = run_dir / "journal.jsonl"
    append_steps(run_dir, 1)
    data = path.read_bytes()
    last = data[data.rstrip(b"\n").rfind(b"\n") + 1 :]
    path.write_bytes(data[: -len(last)] + last[:10])  # the writer is mid-line
    got, s = finished(path)
    assert s.result.torn and s.state.offset == len(data) - len(last)
    with open(path, "ab") as f:
        f.write(last[10:])
    more, r = finished(path, s.state)
    assert len(more) == 1 and more[0][1] == len(data) - len(last) and r.result.intact


def test_damage_before_the_resume_point_stays_reported(tmp_path: Path) -> None:
    path = tmp_path / "seed.jsonl"
    path.write_bytes(
        b'{"lsn":1,"type":"plan"}\n{"lsn":2,"type":"intent","tool":"t"}\n{"lsn":9,"type":"plan"}\n'
        b'{"lsn":3,"type":"intent","tool":"t"}\n'
    )
    _, first = finished(path)
    assert [d.line for d in first.result.corrupt] == [3]
    with open(path, "ab") as f:
        f.write(b'{"lsn":2,"type":"commit"}\n{"lsn":3,"type":"commit"}\n{"lsn":3,"type":"commit"}\n')
    got, r = finished(path, first.state)
    assert [(lsn, closes) for lsn, _, _, closes in got] == [(2, 2), (3, 3)]
    assert [d.line for d in r.result.corrupt] == [3] and [d.reason for d in r.result.torn] == [
        "lsn 3 closed twice"
    ]


def test_a_rotated_or_truncated_or_rewritten_file_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    write_run(run_dir, steps=3)
    path = run_dir / "journal.jsonl"
    _, first = finished(path)
    data = path.read_bytes()
    os.replace(path, run_dir / "old")
    path.write_bytes(data)  # same bytes, another file: what a rotation's rename leaves
    with pytest.raises(JournalChanged, match="replaced"):
        finished(path, first.state)
    _, second = finished(path)
    with open(path, "r+b") as f:
        f.truncate(len(data) - 5)
    with pytest.raises(JournalChanged, match="shorter"):
        finished(path, second.state)
    with open(path, "r+b") as f:
        f.write(data.replace(b'"status":"completed"', b'"status":"cancelled"'))  # the last record
    with pytest.raises(JournalChanged, match="changed"):
        finished(path, second.state)
    assert scan(path).torn  # read from the start, the edit is damage as usual


def test_state_is_only_there_once_the_scan_has_finished(run_dir: Path) -> None:
    from walkback.journal import JournalError

    s = Scanner(run_dir)
    next(iter(s))
    with pytest.raises(JournalError, match="not finished"):
        _ = s.state
