"""Reading only the tail: the backward line reader, the checkpoint search, tail == full scan."""

from __future__ import annotations

from pathlib import Path

import pytest
from recovery_helpers import Run, h
from walkback.journal import JournalDamaged
from walkback.journal.reader import Scanner
from walkback.journal.recovery import analyze
from walkback.journal.recovery._read import _Fold, find_checkpoint, lines_backward, read_window


def forward_lines(data: bytes) -> list[tuple[int, bytes]]:
    out, off = [], 0
    for raw in data.split(b"\n")[:-1]:
        out.append((off, raw.removesuffix(b"\r")))
        off += len(raw) + 1
    return out


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 16])
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"no newline at all",
        b"a\n",
        b"a\nbb\nccc\n",
        b"a\nbb\nccc\npartial",
        b"\n\nx\r\ny\n",
        b"long line " * 40 + b"\nshort\n",
    ],
)
def test_lines_backward_yields_complete_lines_with_offsets(tmp_path: Path, data: bytes, block: int) -> None:
    p = tmp_path / "f"
    p.write_bytes(data)
    assert list(lines_backward(p, block)) == list(reversed(forward_lines(data)))


def full_fold(path: Path) -> list[tuple[str, int]]:
    s = Scanner(path)
    fold = _Fold()
    for rec in s:
        fold.take(rec, s.result.dialect)
    return sorted((p.kind, p.lsn) for p in [*fold.open.values(), *fold.asks.values()])


def test_the_tail_read_starts_at_the_last_checkpoint_and_agrees_with_a_full_scan(run: Run) -> None:
    for i in range(5):
        lsn = run.file_intent("write_file", f"f{i}.txt", b"%d\n" % i, content=f"{i}\n")
        (run.ws / f"f{i}.txt").write_bytes(b"%d\n" % i)
        run.commit(lsn, h(b"%d\n" % i))
    run.checkpoint()
    cp = run.checkpoint()
    open_ = run.file_intent("write_file", "g.txt", b"g\n", content="g\n")
    run.w.append(
        "approval.request", tool="x", target="y", action={"tool": "x", "args": {}}, reason="r", step=1
    )
    run.w.close()
    found = find_checkpoint(run.journal)
    assert found is not None and found[1]["lsn"] == cp
    win = read_window(run.journal)
    assert win.start_lsn == cp
    assert (
        sorted((p.kind, p.lsn) for p in win.pending)
        == full_fold(run.journal)
        == [
            ("approval", open_ + 1),
            ("intent", open_),
        ]
    )
    assert win.header["task"] == "Rename getUserById to fetchUser"
    assert win.last_lsn == open_ + 1 and win.scan.last_h == run.w.last_h
    assert analyze(run.dir).read_from == cp


def test_without_a_checkpoint_the_whole_journal_is_read(run: Run) -> None:
    run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    run.w.close()
    assert find_checkpoint(run.journal) is None
    assert read_window(run.journal).start_lsn is None


def test_a_checkpoint_failing_its_own_hash_is_skipped_and_the_damage_reported(run: Run) -> None:
    run.checkpoint()
    bad = run.checkpoint()
    run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    run.w.close()
    data = run.journal.read_bytes()
    lines = data.splitlines(keepends=True)
    lines[bad] = lines[bad].replace(b'"walkback/', b'"walkbacX/')
    run.journal.write_bytes(b"".join(lines))
    found = find_checkpoint(run.journal)
    assert found is not None and found[1]["lsn"] == bad - 1
    with pytest.raises(JournalDamaged, match="corruption") as e:
        read_window(run.journal)
    assert e.value.line == bad + 1  # the real line number, though the read began mid-file


def test_a_last_checkpoint_that_does_not_link_back_forces_a_full_scan(run: Run) -> None:
    a = run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    run.w.append("test.result", cmd="x", exit_code=0, passed=True, output_tail="")
    run.checkpoint()
    run.w.close()
    lines = run.journal.read_bytes().splitlines(keepends=True)
    del lines[-2]  # an unsynced record before the checkpoint never reached the disk
    run.journal.write_bytes(b"".join(lines))
    assert find_checkpoint(run.journal) is None
    win = read_window(run.journal)
    assert win.start_lsn is None and win.scan.torn  # the full scan sees the checkpoint as a torn tail
    assert [p.lsn for p in win.pending] == [a]
