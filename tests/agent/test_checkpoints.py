"""Checkpoints: real git commits on walkback/<run>, the user's HEAD, branch and index untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agenthelp import of_type, records, scratch
from walkback.agent.approvals import approve_all
from walkback.agent.runs import start_run


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True, check=True).stdout.strip()


def test_checkpoints_are_commits_on_a_walkback_branch_covering_the_journal(tmp_path: Path) -> None:
    ws = scratch("rename", tmp_path / "ws")
    base = git(ws, "rev-parse", "HEAD")
    (ws / "staged.txt").write_text("the user's own work\n")
    git(ws, "add", "staged.txt")
    staged_before = git(ws, "diff", "--cached", "--name-only")

    run_dir = tmp_path / "run"
    assert start_run("rename", ws, approver=approve_all, run_dir=run_dir).status == "completed"
    recs = records(run_dir)
    ckpts = of_type(recs, "checkpoint")
    run = recs[0]["run"]
    assert [c["covers_lsn"] for c in ckpts] == [c["lsn"] for c in ckpts]
    assert len(ckpts) == 5  # after steps 10, 20, 30, 40 (checkpoint_every 10) and at the end
    assert {c["branch"] for c in ckpts} == {f"walkback/{run}"}

    # the user's checkout is as it was: same HEAD, same branch, same staged change, files modified
    assert git(ws, "rev-parse", "HEAD") == base
    assert git(ws, "symbolic-ref", "--short", "HEAD") == "main"
    assert git(ws, "diff", "--cached", "--name-only") == staged_before == "staged.txt"
    assert "getUserById" not in (ws / "users" / "api.py").read_text()

    # each checkpoint is a real commit object, chained from the base, and the last is the branch tip
    parent = base
    for c in ckpts:
        assert git(ws, "cat-file", "-t", c["git"]) == "commit"
        assert git(ws, "rev-parse", f"{c['git']}^") == parent
        parent = c["git"]
    assert git(ws, "rev-parse", f"refs/heads/walkback/{run}") == ckpts[-1]["git"]

    # a checkpoint holds the workspace as of its lsn: after step 10, handler_10 is renamed, 11 is not
    first = ckpts[0]["git"]
    assert "fetchUser" in git(ws, "show", f"{first}:users/handler_09.py")
    assert "getUserById" in git(ws, "show", f"{first}:users/handler_10.py")
    last = ckpts[-1]["git"]
    for path in ("users/api.py", "users/handler_39.py", "staged.txt"):
        assert git(ws, "show", f"{last}:{path}") == (ws / path).read_text().rstrip("\n")
    assert not list(run_dir.glob("checkpoint.index*"))


def test_a_workspace_that_is_not_a_git_repository_runs_without_checkpoints(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    task = tmp_path / "t.json"
    task.write_text(
        '{"title": "t", "steps": [{"tool": "write_file", "args": {"path": "a", "content": "x"}}]}'
    )
    assert start_run(task, ws, approver=approve_all, run_dir=tmp_path / "run").status == "completed"
    recs = records(tmp_path / "run")
    assert recs[0]["base_ref"] is None and of_type(recs, "checkpoint") == []
