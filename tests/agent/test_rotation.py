"""Journal rotation in the agent loop: segments at checkpoints, and a SIGKILL at every rotation
failpoint (or mid-step after a rotation) resumes to the workspace of a clean run, one intact chain."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from agenthelp import agent_run, scratch, tree, walkback
from walkback.agent.approvals import approve_all
from walkback.agent.runs import start_run
from walkback.journal.segments import list_segments, scan_run

ROTATE = {"WALKBACK_ROTATE_BYTES": "1"}
"""Rotate at every checkpoint (the rename task checkpoints after steps 10, 20, 30, 40 and at the end)."""


@pytest.fixture(scope="module")
def clean_rename(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    base = tmp_path_factory.mktemp("clean")
    ws = scratch("rename", base / "ws")
    assert start_run("rename", ws, approver=approve_all, run_dir=base / "run").status == "completed"
    assert not list_segments(base / "run")  # the default threshold (4 MiB) is far away
    return tree(ws)


def whole_run(run_dir: Path) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = []
    res = scan_run(run_dir, on_record=lambda _f, r: recs.append(r.data))
    assert res.intact, res.damage_summary()
    assert [r["lsn"] for r in recs] == list(range(len(recs)))
    return recs


def one_commit_per_step(run_dir: Path) -> list[dict[str, Any]]:
    recs = whole_run(run_dir)
    intents = {r["lsn"]: r["step"] for r in recs if r["type"] == "intent"}
    commits = Counter(intents[r["ref"]] for r in recs if r["type"] == "commit")
    assert commits == Counter(range(41)), "a step was committed twice or never"
    assert Counter(intents.values()) == Counter(range(41)), "a step's intent was issued twice"
    assert sum(r["type"] == "plan" for r in recs) == 1, "the run was planned again"
    check = walkback("check", str(run_dir))
    assert check.returncode == 0 and "archived segment(s)" in check.stdout, check.stdout + check.stderr
    return recs


def test_a_run_rotates_at_its_checkpoints(tmp_path: Path, clean_rename: dict[str, bytes]) -> None:
    ws = scratch("rename", tmp_path / "ws")
    p = agent_run("rename", ws, tmp_path / "run", env=ROTATE)
    assert p.returncode == 0, p.stderr
    assert tree(ws) == clean_rename
    recs = one_commit_per_step(tmp_path / "run")
    segs = list_segments(tmp_path / "run")
    checkpoints = [r["lsn"] for r in recs if r["type"] == "checkpoint"]
    assert [s.last_lsn for s in segs] == checkpoints  # each segment ends with its checkpoint
    live = (tmp_path / "run" / "journal.jsonl").read_bytes().splitlines()
    assert len(live) == 2 and b'"type":"journal.continued"' in live[0] and b'"type":"run.end"' in live[1]


@pytest.mark.parametrize(
    "failpoint",
    [
        "rotate.after_link:2",
        "rotate.after_next:2",
        "rotate.after_rename:2",
        "rotate.after_dir_fsync:2",
        "apply.after_tmp_write:23",  # mid-step, two rotations back: the plan is in segment 0
    ],
)
def test_killed_during_or_after_a_rotation_resumes_like_a_clean_run(
    tmp_path: Path, clean_rename: dict[str, bytes], failpoint: str
) -> None:
    ws = scratch("rename", tmp_path / "ws")
    run_dir = tmp_path / "run"
    p = agent_run("rename", ws, run_dir, env={**ROTATE, "WALKBACK_FAILPOINT": failpoint})
    assert p.returncode == -9, f"{failpoint} never fired: {p.stderr[-500:]}"
    r = walkback("agent", "resume", str(run_dir), env=ROTATE)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{run_dir}: completed"
    assert tree(ws) == clean_rename
    recs = one_commit_per_step(run_dir)
    assert not (run_dir / "journal.jsonl.next").exists()
    continued = [r["lsn"] for r in recs if r["type"] == "journal.continued"]
    assert continued == [f.first_lsn for f in scan_run(run_dir).files[1:]] and len(continued) >= 2
