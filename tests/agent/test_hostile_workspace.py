"""Hostile workspaces and run directories: planted links, runs without a workspace, runs killed
before their header. Real repositories, real processes, real SIGKILL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from agenthelp import agent_run, of_type, records, walkback
from walkback.agent.task import load_task, make_workspace
from walkback.agent.tools import apply_file
from walkback.agent.tools.base import ToolError
from walkback.journal.fileops import OS
from walkback.journal.record import sha256_bytes

VICTIM = b"precious, outside the workspace\n"


def task_file(tmp: Path, steps: list[dict[str, object]]) -> Path:
    path = tmp / "task.json"
    setup = {
        "files": [{"path": "main.py", "content": "print('old')\n"}, {"path": "README.md", "content": "#\n"}]
    }
    path.write_text(json.dumps({"title": "hostile", "setup": setup, "steps": steps}))
    return path


WRITE_MAIN = [{"tool": "write_file", "args": {"path": "main.py", "content": "print('new')\n"}}]


def crashed(tmp: Path, failpoint: str) -> tuple[Path, Path, Path]:
    """``(task, workspace, run dir)`` of a WRITE_MAIN run killed (SIGKILL) at ``failpoint``."""
    task = task_file(tmp, WRITE_MAIN)
    ws, run_dir = tmp / "ws", tmp / "run"
    make_workspace(load_task(task), ws)
    p = agent_run(task, ws, run_dir, env={"WALKBACK_FAILPOINT": failpoint})
    assert p.returncode == -9, p.stderr
    return task, ws, run_dir


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    victim = tmp_path / "outside" / "victim"
    victim.parent.mkdir()
    victim.write_bytes(VICTIM)
    return victim


def test_a_link_planted_at_the_old_temp_name_does_not_redirect_the_write(
    tmp_path: Path, outside: Path
) -> None:
    task = task_file(tmp_path, WRITE_MAIN)
    ws = tmp_path / "ws"
    make_workspace(load_task(task), ws)
    (ws / "main.py.wb-tmp").symlink_to(outside)
    p = agent_run(task, ws, tmp_path / "run")
    assert p.returncode == 0, p.stderr
    assert outside.read_bytes() == VICTIM
    assert not (ws / "main.py").is_symlink() and (ws / "main.py").read_bytes() == b"print('new')\n"
    assert not [n for n in os.listdir(ws) if n.endswith(".wb-tmp") and n != "main.py.wb-tmp"]


def test_resume_after_a_crash_mid_write_redoes_inside_the_workspace_only(
    tmp_path: Path, outside: Path
) -> None:
    _, ws, run_dir = crashed(tmp_path, "apply.after_tmp_write")
    (ws / "main.py.wb-tmp").symlink_to(outside)  # planted while the run was dead
    r = walkback("agent", "resume", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert outside.read_bytes() == VICTIM
    assert (ws / "main.py").read_bytes() == b"print('new')\n" and not (ws / "main.py").is_symlink()
    assert (ws / "main.py.wb-tmp").is_symlink()  # a link is never followed, nor removed
    assert not list(ws.glob(".main.py.*.wb-tmp")), "the crash's own temp file is cleaned up"


def test_a_target_swapped_for_a_link_out_of_the_workspace_is_left_to_a_human(
    tmp_path: Path, outside: Path
) -> None:
    _, ws, run_dir = crashed(tmp_path, "apply.after_tmp_write")
    (ws / "main.py").unlink()
    (ws / "main.py").symlink_to(outside)
    r = walkback("recover", str(run_dir), "--apply", "--json")
    assert r.returncode == 3, r.stderr
    [f] = orjson.loads(r.stdout)["findings"]
    assert (f["finding"], f["action"]) == ("in_doubt", "ask_human") and "outside the workspace" in f["detail"]
    assert outside.read_bytes() == VICTIM


def test_file_writes_refuse_a_directory_that_is_a_link_out_of_the_workspace(
    tmp_path: Path, outside: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sub").symlink_to(outside.parent, target_is_directory=True)
    for data in (b"overwritten\n", None):
        with pytest.raises(ToolError, match="outside the workspace"):
            apply_file(ws / "sub" / "victim", data, OS, root=ws)
    assert outside.read_bytes() == VICTIM and os.listdir(outside.parent) == ["victim"]


def seed_run(tmp: Path) -> tuple[Path, Path]:
    """A run directory holding a seed lsn-dialect journal (no header, so no workspace) whose open
    intent edits ``a.txt``; and a directory that holds an ``a.txt`` of its own."""
    run_dir, cwd = tmp / "run", tmp / "cwd"
    run_dir.mkdir()
    cwd.mkdir()
    (cwd / "a.txt").write_bytes(b"old\n")
    lines = [
        {"lsn": 1, "type": "plan", "task": "edit a.txt"},
        {"lsn": 2, "type": "intent", "tool": "write_file", "file": "a.txt", "content": "new\n",
         "pre": sha256_bytes(b"old\n"), "post": sha256_bytes(b"new\n")},
    ]  # fmt: skip
    (run_dir / "journal.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    return run_dir, cwd


def test_resume_of_a_run_whose_header_names_no_workspace_refuses_before_touching_anything(
    tmp_path: Path,
) -> None:
    run_dir, cwd = seed_run(tmp_path)
    before = sorted(os.listdir(run_dir)), (run_dir / "journal.jsonl").read_bytes()
    p = subprocess.run(
        [sys.executable, "-m", "walkback", "agent", "resume", str(run_dir)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert p.returncode == 1 and "recover RUN --workspace DIR" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert (cwd / "a.txt").read_bytes() == b"old\n"
    assert (sorted(os.listdir(run_dir)), (run_dir / "journal.jsonl").read_bytes()) == before


@pytest.mark.parametrize("failpoint", ["write.run.start.before", "write.run.start.mid"])
def test_a_run_killed_before_its_header_can_be_run_again_in_the_same_directory(
    tmp_path: Path, failpoint: str
) -> None:
    task, ws, run_dir = crashed(tmp_path, failpoint)
    assert b"\n" not in (run_dir / "journal.jsonl").read_bytes()
    again = agent_run(task, ws, run_dir)
    assert again.returncode == 0, again.stderr
    assert [r["type"] for r in records(run_dir)][:2] == ["run.start", "plan"]
    assert len(of_type(records(run_dir), "commit")) == 1
    kept = list(run_dir.glob("journal.jsonl.broken-header-*"))
    assert len(kept) == (failpoint.endswith(".mid"))  # a partial header is kept aside, an empty file is not


def test_a_run_directory_with_a_real_journal_is_still_refused(tmp_path: Path) -> None:
    task = task_file(tmp_path, WRITE_MAIN)
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    make_workspace(load_task(task), ws)
    assert agent_run(task, ws, run_dir).returncode == 0
    before = (run_dir / "journal.jsonl").read_bytes()
    again = agent_run(task, ws, run_dir)
    assert again.returncode == 1 and "agent resume" in again.stderr
    assert (run_dir / "journal.jsonl").read_bytes() == before
