"""A disk that fills up: every command that cannot write prints one line naming the file and exits 4.

Real disks: a small tmpfs is mounted for each test (root only; skipped elsewhere) and filled with a
filler file so that the run dies at different points (header, blobs or journal, workspace files).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from agenthelp import agent_run, scratch, walkback
from fullfs import Disk, mounted

WRITE_FAILED = 4


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    with mounted(tmp_path / "disk") as d:
        yield d


def one_error_line(p: subprocess.CompletedProcess[str], under: Path) -> str:
    errors = [line for line in p.stderr.splitlines() if not line.startswith("[")]
    assert p.returncode == WRITE_FAILED, p.stderr
    assert len(errors) == 1 and errors[0].startswith("Error: ") and str(under) in errors[0], errors
    assert "Traceback" not in p.stderr and (
        "No space left on device" in errors[0] or "Out of diskspace" in errors[0]
    )
    return errors[0]


@pytest.mark.parametrize("free", [0, 4 << 10, 16 << 10, 64 << 10])
def test_a_full_run_directory_fails_with_one_line_naming_the_file(
    tmp_path: Path, disk: Disk, free: int
) -> None:
    ws = scratch("rename", tmp_path / "ws")
    disk.fill(free)
    one_error_line(agent_run("rename", ws, disk.root / "run"), disk.root)


@pytest.mark.parametrize("free", [8 << 10, 32 << 10])
def test_a_full_workspace_fails_with_one_line_naming_the_file(tmp_path: Path, disk: Disk, free: int) -> None:
    ws = scratch("rename", disk.root / "ws")
    disk.fill(free)
    one_error_line(agent_run("rename", ws, tmp_path / "run"), disk.root / "ws")


def test_recovery_and_repair_on_a_full_disk_fail_the_same_way(tmp_path: Path, disk: Disk) -> None:
    ws = scratch("rename", tmp_path / "ws")
    run_dir = disk.root / "run"
    p = agent_run("rename", ws, run_dir, env={"WALKBACK_FAILPOINT": "write.commit.mid:3"})
    assert p.returncode == -9
    disk.fill(0)
    one_error_line(walkback("recover", str(run_dir), "--apply"), disk.root)
    one_error_line(walkback("check", "--repair", str(run_dir)), disk.root)
    os.unlink(disk.root / "filler")
    assert walkback("check", "--repair", str(run_dir)).returncode == 0  # nothing was harmed
    assert walkback("recover", str(run_dir), "--apply").returncode == 0
    assert not [n for n in os.listdir(run_dir) if ".broken-" in n and os.path.getsize(run_dir / n) == 0]
    shutil.rmtree(run_dir)
