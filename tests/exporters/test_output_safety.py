"""Where an export writes: never over what it reads, an error naming the output (not its hidden temp
file), and the temp files a killed export left removed by the next one (unless a live writer holds
them).

Real files, hard and symbolic links, a real full and a real read-only tmpfs (root only).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from fullfs import mounted
from walkback.journal.fileops import sweep_temps

from walkback.cli import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def export(*args: str | Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["export", *map(str, args)])
    assert "Traceback" not in res.output
    return res.exit_code, res.stderr


@pytest.fixture
def run(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES / "rename-crashed", tmp_path / "run")
    return tmp_path / "run"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(code: int, said: str, out: Path) -> None:
    lines = [line for line in said.splitlines() if line.startswith("Error: ")]
    assert code == 1, said
    assert len(lines) == 1 and lines[0].startswith(f"Error: {out}: ") and "refused" in lines[0], said


def test_an_output_that_is_the_input_is_refused_and_the_input_kept(run: Path, tmp_path: Path) -> None:
    journal = run / "journal.jsonl"
    before = snapshot(run)
    (tmp_path / "hard.jsonl").hardlink_to(journal)
    (tmp_path / "soft.csv").symlink_to(journal)
    cases = [
        ("otlp", run, journal),  # the run directory's own journal
        ("csv", journal, journal),
        ("parquet", journal, journal),
        ("csv", run, tmp_path / "hard.jsonl"),  # the same file under another name
        ("otlp", journal, tmp_path / "soft.csv"),  # a link to it
        ("csv", run, run / "blobs" / "report.csv"),  # inside the run directory
        ("csv", tmp_path / "hard.jsonl", journal),  # the input read through a hard link
    ]
    for name, source, out in cases:
        code, said = export(name, source, "-o", out)
        refused(code, said, out)
    assert snapshot(run) == before
    assert (tmp_path / "hard.jsonl").read_bytes() == journal.read_bytes()


def test_a_folder_of_sessions_never_receives_its_own_export(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("multi-agent", "rename-clean"):
        shutil.copytree(SAMPLES / name, folder / name)
    before = snapshot(folder)
    for name, out in [("csv", folder / "all.csv"), ("parquet", folder), ("parquet", tmp_path)]:
        code, said = export(name, folder, "-o", out)
        refused(code, said, out)
    assert snapshot(folder) == before
    code, _ = export("parquet", folder, "-o", tmp_path / "dataset")  # beside it: fine
    assert code == 0 and snapshot(folder) == before


def test_a_full_disk_names_the_output_never_its_temp_file(run: Path, tmp_path: Path) -> None:
    with mounted(tmp_path / "disk", size="64k") as disk:
        disk.fill(4 << 10)
        for name in ("csv", "otlp", "parquet"):
            out = disk.root / f"out.{name}"
            code, said = export(name, run, "-o", out)
            assert code == 4, said
            assert f"Error: {out}: cannot write: No space left on device" in said, said
            assert ".wb-tmp" not in said and not out.exists()
        assert sorted(os.listdir(disk.root)) == ["filler"]


def test_a_read_only_folder_names_the_output_never_its_temp_file(run: Path, tmp_path: Path) -> None:
    with mounted(tmp_path / "disk") as disk:
        subprocess.run(["mount", "-o", "remount,ro", str(disk.root)], check=True)
        out = disk.root / "out.csv"
        code, said = export("csv", run, "-o", out)
        assert code == 4 and f"Error: {out}: cannot write: Read-only file system" in said, said
        assert ".wb-tmp" not in said


def plant(folder: Path, name: str, *, held: bool = False) -> tuple[Path, int | None]:
    """A temp file of walkback's naming beside ``folder/name``, as a killed export leaves one
    (``held``: locked, as a live one is)."""
    tmp = folder / f".{name}.0123456789abcdef.wb-tmp"
    tmp.write_bytes(b"half an export")
    if not held:
        return tmp, None
    fd = os.open(tmp, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return tmp, fd


def test_a_killed_exports_temp_files_are_removed_by_the_next_one(run: Path, tmp_path: Path) -> None:
    stale, _ = plant(tmp_path, "out.csv")
    live, fd = plant(tmp_path, "out.csv", held=True)
    live = live.rename(live.with_name(".out.csv.fedcba9876543210.wb-tmp"))
    other, _ = plant(tmp_path, "other.csv")  # another output's: not ours to judge
    try:
        assert export("csv", run, "-o", tmp_path / "out.csv")[0] == 0
        assert not stale.exists(), "left by a dead writer: removed"
        assert live.exists(), "held by a live writer: kept"
        assert other.exists()
    finally:
        assert fd is not None
        os.close(fd)
    assert sweep_temps(tmp_path / "out.csv") == [live], "once its writer is gone it goes too"


def test_a_dataset_loses_the_temp_files_a_killed_export_left_in_its_partitions(
    run: Path, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    run.rename(sessions / "run")
    shutil.copytree(SAMPLES / "multi-agent", sessions / "multi-agent")
    out = tmp_path / "dataset"
    assert export("parquet", sessions, "-o", out)[0] == 0
    files = sorted(out.rglob("*.parquet"))
    assert len(files) >= 2
    planted = [plant(f.parent, f.name)[0] for f in files]
    old = out / "source_format=walkback" / "day=1999-01-01"  # a partition this session has left
    old.mkdir(parents=True)
    planted.append(plant(old, files[0].name)[0])
    assert export("parquet", sessions, "-o", out)[0] == 0
    assert not [p for p in planted if p.exists()]
    assert sorted(out.rglob("*.parquet")) == files
