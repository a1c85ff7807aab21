"""The crash-state model on tiny workloads whose possible outcomes are known by hand."""

from __future__ import annotations

from pathlib import Path

from crashfs import SECTOR, CrashState, RecordingOps, crash_states, sync_points
from walkback.journal.fileops import atomic_write


def states_at_end(ops: RecordingOps) -> dict[str, CrashState]:
    return {s.variant: s for s in crash_states(ops.initial, ops.log, [len(ops.log)])}


def test_an_unsynced_new_file_may_be_missing_empty_full_or_nuls(tmp_path: Path) -> None:
    ops = RecordingOps(tmp_path)
    fd = ops.open_new(tmp_path / "f")
    ops.write(fd, b"hello")
    ops.close(fd)
    s = states_at_end(ops)
    assert "f" not in s["meta-lost,drop"].files
    assert s["drop"].files["f"] == b""
    assert s["full"].files["f"] == b"hello"
    assert s["nul:f"].files["f"] == b"\0" * 5


def test_a_synced_file_survives_only_once_its_directory_is_synced(tmp_path: Path) -> None:
    ops = RecordingOps(tmp_path)
    fd = ops.open_new(tmp_path / "f")
    ops.write(fd, b"data")
    ops.fsync(fd)
    ops.close(fd)
    assert "f" not in states_at_end(ops)["meta-lost,drop"].files
    ops.fsync_dir(tmp_path)
    assert {s.files["f"] for s in states_at_end(ops).values()} == {b"data"}


def test_unsynced_appends_tear_at_sectors_and_reorder(tmp_path: Path) -> None:
    (tmp_path / "j").write_bytes(b"head\n")
    ops = RecordingOps(tmp_path)
    fd = ops.open_append(tmp_path / "j")
    a, b = b"a" * 700 + b"\n", b"b" * 300 + b"\n"
    ops.write(fd, a)
    ops.write(fd, b)
    s = states_at_end(ops)
    assert s["drop"].files["j"] == b"head\n"
    assert s["full"].files["j"] == b"head\n" + a + b
    assert s[f"torn@{SECTOR}:j"].files["j"] == (b"head\n" + a + b)[:SECTOR]
    assert s["reorder:j"].files["j"] == b"head\n" + b"\0" * len(a) + b
    assert s["nul:j"].files["j"] == b"head\n" + b"\0" * (len(a) + len(b))
    assert all(st.durable["j"] == b"head\n" for st in s.values())


def test_an_atomic_write_leaves_the_old_or_the_new_content_at_every_crash_point(tmp_path: Path) -> None:
    (tmp_path / "t").write_bytes(b"old")
    ops = RecordingOps(tmp_path)
    atomic_write(tmp_path / "t", b"new" * 400, ops=ops)
    seen = {s.files.get("t") for s in crash_states(ops.initial, ops.log, range(len(ops.log) + 1))}
    assert seen == {b"old", b"new" * 400}
    assert {s.files["t"] for s in states_at_end(ops).values()} == {b"new" * 400}


def test_a_rename_without_its_directory_fsync_may_be_lost_or_kept_in_order(tmp_path: Path) -> None:
    for name in ("x", "y"):
        (tmp_path / name).write_bytes(b"1")
    ops = RecordingOps(tmp_path)
    for name in ("x", "y"):
        fd = ops.open_new(tmp_path / f"{name}.tmp")
        ops.write(fd, b"2")
        ops.fsync(fd)
        ops.close(fd)
        ops.replace(tmp_path / f"{name}.tmp", tmp_path / name)
    got = {(s.files["x"], s.files["y"]) for s in crash_states(ops.initial, ops.log, sync_points(ops.log))}
    assert (b"1", b"1") in got and (b"2", b"1") in got and (b"2", b"2") in got
    assert (b"1", b"2") not in got, "entry operations persist in order"
