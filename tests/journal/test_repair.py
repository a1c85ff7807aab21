"""Torn-tail repair: .broken copy, truncate, journal.recovered; refuses corruption; reads never write."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from journal_helpers import RecordingOps, lines_of
from walkback.journal import JournalDamaged, JournalWriter, Scanner, read_records, repair, scan
from walkback.journal.testing import write_run


def _snapshot(d: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(d)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    "tail", [b'{"v":1,"lsn":26,"ts":"2026-01-01T', b"\x00" * 4096, b"\x00" * 10 + b"\n{partial"], ids=str
)
def test_repair_keeps_a_copy_cuts_the_tail_and_says_so(
    journal_file: Path, rec_ops: RecordingOps, tail: bytes
) -> None:
    good = journal_file.read_bytes()
    before = scan(journal_file)
    journal_file.write_bytes(good + tail)
    report = repair(journal_file, ops=rec_ops)
    assert report.truncated_bytes == len(tail) and report.last_good_lsn == before.last_lsn
    assert report.broken_copy is not None and report.broken_copy.read_bytes() == good + tail
    assert report.broken_copy.name.startswith(f"journal.jsonl.broken-{before.last_lsn}-")
    data = journal_file.read_bytes()
    assert data.startswith(good) and data.count(b"\n") == good.count(b"\n") + 1
    records, res = read_records(journal_file)
    assert res.intact
    last = records[-1].data
    assert last["type"] == "journal.recovered" and last["lsn"] == report.recovered_lsn == before.last_lsn + 1
    assert last["prev"] == before.last_h
    assert last["truncated_bytes"] == len(tail)
    assert last["dropped_sha256"] == "sha256:" + hashlib.sha256(tail).hexdigest()
    assert last["last_good_lsn"] == before.last_lsn and last["broken_copy"] == report.broken_copy.name
    assert last["orphan_lines"] == [d.line for d in scan_of(good + tail, journal_file).torn]
    order = [(op, Path(p).name) for op, p, _ in rec_ops.log if op in ("fsync", "fsync_dir", "fdatasync")]
    assert order[:3] == [("fsync", report.broken_copy.name), ("fsync_dir", "run"), ("fsync", "journal.jsonl")]
    assert order[-1] == ("fdatasync", "journal.jsonl"), "the journal.recovered record is durable"


def scan_of(data: bytes, like: Path) -> object:
    copy = like.with_name("copy.jsonl")
    copy.write_bytes(data)
    try:
        return scan(copy)
    finally:
        copy.unlink()


def test_after_repair_the_writer_continues_the_chain(journal_file: Path) -> None:
    with open(journal_file, "ab") as f:
        f.write(b'{"v":1,"lsn"')
    report = repair(journal_file)
    with JournalWriter.open(journal_file) as w:
        assert w.append("plan", steps=[]) == (report.recovered_lsn or 0) + 1
    assert scan(journal_file).intact


def test_repair_refuses_corruption_and_changes_nothing(run_dir: Path) -> None:
    path = run_dir / "journal.jsonl"
    lines = lines_of(path)
    lines[4] = lines[4].replace(b'"tool":"write_file"', b'"tool":"delete_file"', 1)
    assert b"delete_file" in lines[4]
    path.write_bytes(b"".join(lines) + b"{torn")
    before = _snapshot(run_dir)
    with pytest.raises(JournalDamaged, match="corruption at lsn 4.*not repaired: a human must decide") as e:
        repair(path)
    assert e.value.line == 5
    assert _snapshot(run_dir) == before


def test_repair_of_an_intact_journal_does_nothing(run_dir: Path) -> None:
    before = _snapshot(run_dir)
    report = repair(run_dir)
    assert report.truncated_bytes == 0 and report.broken_copy is None and report.recovered_lsn is None
    assert _snapshot(run_dir) == before


def test_repair_refuses_when_even_the_header_is_damaged(tmp_path: Path) -> None:
    w = JournalWriter.create(tmp_path / "r", task="t")
    w.close()
    data = w.path.read_bytes()
    w.path.write_bytes(data.replace(b'"task":"t"', b'"task":"u"'))
    assert scan(w.path).torn and not scan(w.path).records
    with pytest.raises(JournalDamaged, match="header itself is damaged"):
        repair(w.path)
    assert w.path.read_bytes() == data.replace(b'"task":"t"', b'"task":"u"')


def test_repair_of_an_lsn_dialect_journal_appends_in_that_dialect(tmp_path: Path) -> None:
    path = tmp_path / "lsn.jsonl"
    path.write_bytes(b'{"lsn":1,"type":"plan"}\n{"lsn":2,"type":"intent","tool":"t"}\n{"lsn":3,"ty')
    report = repair(path)
    records, res = read_records(path)
    assert res.intact and report.recovered_lsn == 3
    assert records[-1].data["type"] == "journal.recovered" and "h" not in records[-1].data


def test_plain_reads_never_modify_a_damaged_journal(tmp_path: Path) -> None:
    from walkback.importers import load

    run = tmp_path / "run"
    write_run(run, steps=3, end=None)
    path = run / "journal.jsonl"
    with open(path, "ab") as f:
        f.write(b"\x00" * 100)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = _snapshot(tmp_path)
    scan(path)
    read_records(path)
    list(Scanner(run))
    session = load(run)
    assert session.integrity.torn_tail is not None
    assert _snapshot(tmp_path) == before
