"""atomic_write and FileOps.mkdir: old-or-new content, no temp left behind, durable entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from journal_helpers import RecordingOps, eio
from walkback.journal import atomic_write


def test_atomic_write_replaces_the_content_and_syncs_the_directory(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")
    atomic_write(target, b"new", ops=rec_ops)
    assert target.read_bytes() == b"new"
    order = [op for op, _, _ in rec_ops.log if op in ("write", "fsync", "replace", "fsync_dir")]
    assert order == ["write", "fsync", "replace", "fsync_dir"]


@pytest.mark.parametrize("failing", ["write", "fsync"])
def test_target_unchanged_and_temp_file_cleaned_up_on_failure(
    tmp_path: Path, rec_ops: RecordingOps, failing: str
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")
    rec_ops.fail[failing] = eio()
    with pytest.raises(OSError):
        atomic_write(target, b"new", ops=rec_ops)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_disk_full_simulation_leaves_no_partial_target(tmp_path: Path, rec_ops: RecordingOps) -> None:
    target = tmp_path / "new.txt"
    rec_ops.fail["write"] = OSError(28, "No space left on device")
    with pytest.raises(OSError, match="No space"):
        atomic_write(target, b"x" * 10000, ops=rec_ops)
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_mkdir_fsyncs_the_parent_of_each_new_directory(tmp_path: Path, rec_ops: RecordingOps) -> None:
    rec_ops.mkdir(tmp_path / "a" / "b" / "c")
    synced = [p for op, p, _ in rec_ops.log if op == "fsync_dir"]
    assert synced == [str(tmp_path), str(tmp_path / "a"), str(tmp_path / "a" / "b")]
    rec_ops.mkdir(tmp_path / "a" / "b" / "c")  # exists: nothing to do
    assert len([op for op, _, _ in rec_ops.log if op == "fsync_dir"]) == 3
