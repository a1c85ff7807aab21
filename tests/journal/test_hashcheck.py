"""The second-core hash worker: same verdicts as hashing in-process, and it never outlives a read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from journal_helpers import lines_of
from walkback.journal import Scanner, hashcheck, read_records, scan
from walkback.journal.testing import synth_journal


@pytest.fixture
def big(tmp_path: Path) -> Path:
    path = tmp_path / "j.jsonl"
    synth_journal(path, 3000)
    return path


@pytest.fixture
def worker_always(monkeypatch: pytest.MonkeyPatch) -> list[hashcheck.HashWorker]:
    """Start the worker for any file size; collect the workers started."""
    started: list[hashcheck.HashWorker] = []
    real = hashcheck.HashWorker

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, path: Path, offset: int) -> None:
            super().__init__(path, offset)
            started.append(self)

    monkeypatch.setattr(hashcheck, "MIN_BYTES", 0)
    monkeypatch.setattr(hashcheck, "HashWorker", Spy)
    monkeypatch.setattr(hashcheck, "core_free", lambda: True)
    return started


def _verdict(path: Path) -> tuple[object, ...]:
    records, res = read_records(path)
    return (
        [(r.lsn, r.offset, r.line, r.length, r.data, r.after_gap) for r in records],
        res.records,
        res.last_lsn,
        res.last_h,
        res.valid_end,
        [(d.line, d.lsn, d.reason) for d in res.corrupt],
        [(d.line, d.lsn, d.reason) for d in res.torn],
    )


def _damage(path: Path, how: str) -> None:
    lines = lines_of(path)
    if how == "flip_body":
        lines[1500] = lines[1500].replace(b'"lsn":1500,', b'"lsn":1500 ,', 1)
        assert b'"lsn":1500 ,' in lines[1500]
    elif how == "flip_hash":
        line = lines[2000]
        lines[2000] = line[:-10] + (b"0" if line[-10:-9] != b"0" else b"1") + line[-9:]
    elif how == "torn":
        lines[-1] = lines[-1][:50]
    elif how == "crlf":
        lines = [line.replace(b"\n", b"\r\n") for line in lines]
    elif how == "bom":
        lines[0] = b"\xef\xbb\xbf" + lines[0]
    elif how == "garbage":
        lines.insert(700, b"not json\n")
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize("how", ["intact", "flip_body", "flip_hash", "torn", "crlf", "bom", "garbage"])
def test_the_worker_gives_the_same_verdict_as_in_process_hashing(
    big: Path, worker_always: list[hashcheck.HashWorker], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how != "intact":
        _damage(big, how)
    monkeypatch.setattr(hashcheck, "MIN_BYTES", 1 << 62)
    alone = _verdict(big)
    assert not worker_always
    monkeypatch.setattr(hashcheck, "MIN_BYTES", 0)
    assert _verdict(big) == alone
    assert len(worker_always) == 1
    if how.startswith("flip"):
        assert alone[5], "the damage was seen"


def test_with_the_worker_intact_lines_are_not_hashed_in_process(
    big: Path, worker_always: list[hashcheck.HashWorker], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> object:
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(hashlib, "sha256", counting)
    assert scan(big).intact and len(worker_always) == 1
    assert len(calls) <= 1, "only the header (read before the worker starts) is hashed here"
    monkeypatch.setattr(hashcheck, "MIN_BYTES", 1 << 62)
    assert scan(big).intact
    assert len(calls) >= 3000


def test_a_worker_that_dies_is_replaced_by_in_process_hashing(
    big: Path, worker_always: list[hashcheck.HashWorker]
) -> None:
    expected = scan(big)
    assert expected.intact
    scanner = Scanner(big)
    it = iter(scanner)
    next(it), next(it)
    proc = worker_always[-1].proc
    assert proc is not None
    proc.kill()
    n = 2 + sum(1 for _ in it)
    assert n == 3000 and scanner.result.intact and scanner.result.last_h == expected.last_h


def test_the_worker_never_outlives_the_read(big: Path, worker_always: list[hashcheck.HashWorker]) -> None:
    it = iter(Scanner(big))
    next(it), next(it)
    proc = worker_always[-1].proc
    assert proc is not None and proc.poll() is None
    it.close()
    assert proc.returncode is not None, "closing the iterator killed and reaped the worker"
    scan(big)
    assert worker_always[-1].proc is None


def test_small_journals_are_hashed_in_process(big: Path) -> None:
    assert big.stat().st_size < hashcheck.MIN_BYTES
    assert hashcheck.start(big, 0, big.stat().st_size) is None


def test_no_worker_is_started_without_a_second_core(
    big: Path, worker_always: list[hashcheck.HashWorker], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hashcheck, "core_free", lambda: False)
    assert scan(big).intact and not worker_always
