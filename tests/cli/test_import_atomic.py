"""``walkback import`` makes its journal complete or not at all: a kill or a full disk mid-way leaves
no shorter journal that reads as intact, a run again succeeds, and an output that exists in any
form (an empty file, a symbolic link) is refused, never written through.

Real processes killed with SIGKILL (the writer's failpoints, between two records and in the middle
of one) and a real full tmpfs (root only).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fullfs import mounted
from walkback.journal import read_records, scan
from walkback.journal.testing import write_run

ROOT = Path(__file__).resolve().parents[2]


def walkback(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "walkback", *map(str, args)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("src") / "run"
    write_run(run, steps=12)
    return run


def temps(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".wb-tmp"))


@pytest.mark.parametrize("failpoint", ["write.commit.before:6", "write.intent.mid:4"])
def test_a_killed_import_leaves_no_journal_and_a_rerun_succeeds(
    source: Path, tmp_path: Path, failpoint: str
) -> None:
    out = tmp_path / "out.jsonl"
    killed = walkback("import", source, "-o", out, env={"WALKBACK_FAILPOINT": failpoint})
    assert killed.returncode == -9, killed.stderr
    assert not out.exists(), "a killed import leaves no file that check could call intact"
    assert len(temps(tmp_path)) == 1, "the killed run's temp file is what it left"
    again = walkback("import", source, "-o", out)
    assert again.returncode == 0, again.stderr
    assert temps(tmp_path) == [], "the rerun removed the killed run's temp file"
    res = scan(out)
    assert res.intact and res.records == len(read_records(source)[0])


def test_a_killed_import_into_a_run_directory_leaves_it_importable(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    killed = walkback("import", source, "-o", out, env={"WALKBACK_FAILPOINT": "write.plan.after"})
    assert killed.returncode == -9
    assert not (out / "journal.jsonl").exists()
    assert walkback("import", source, "-o", out).returncode == 0
    assert scan(out / "journal.jsonl").intact and temps(out) == []


def test_an_import_onto_a_full_disk_names_the_output_and_leaves_nothing(source: Path, tmp_path: Path) -> None:
    with mounted(tmp_path / "disk", size="64k") as disk:
        disk.fill(8 << 10)
        out = disk.root / "out.jsonl"
        full = walkback("import", source, "-o", out)
        errors = full.stderr.splitlines()
        assert full.returncode == 4, full.stderr
        assert len(errors) == 1 and errors[0].startswith(f"Error: {out}: ") and "No space" in errors[0]
        assert ".wb-tmp" not in full.stderr and "Traceback" not in full.stderr
        assert not out.exists() and temps(disk.root) == []
        os.unlink(disk.root / "filler")
        assert walkback("import", source, "-o", out).returncode == 0
        assert scan(out).intact


def test_an_existing_output_in_any_form_is_refused_and_left_as_it_was(source: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"not a journal")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "to-victim.jsonl").symlink_to(victim)
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (tmp_path / "dir-link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    for name in ("empty.jsonl", "to-victim.jsonl", "dangling.jsonl", "dir-link"):
        r = walkback("import", source, "-o", tmp_path / name)
        assert r.returncode == 1, (name, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"Error: {tmp_path / name}"), r.stderr
    assert victim.read_bytes() == b"not a journal"
    assert (tmp_path / "empty.jsonl").read_bytes() == b""
    assert not (tmp_path / "nowhere.jsonl").exists() and list((tmp_path / "elsewhere").iterdir()) == []
    assert temps(tmp_path) == []
