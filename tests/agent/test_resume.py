"""Resume: recover first, then continue at the next step; committed work is never redone."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from agenthelp import agent_run, of_type, records, scratch, tree, walkback
from walkback.agent.approvals import approve_all, deny_all
from walkback.agent.runs import resume_run, start_run
from walkback.agent.task import load_task, make_workspace
from walkback.journal.errors import AgentError


@pytest.fixture(scope="module")
def clean_rename(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    base = tmp_path_factory.mktemp("clean")
    ws = scratch("rename", base / "ws")
    assert start_run("rename", ws, approver=approve_all, run_dir=base / "run").status == "completed"
    return tree(ws)


def crash_then_resume(tmp: Path, failpoint: str) -> tuple[Path, Path]:
    ws = scratch("rename", tmp / "ws")
    run_dir = tmp / "run"
    p = agent_run("rename", ws, run_dir, env={"WALKBACK_FAILPOINT": failpoint})
    assert p.returncode == -9, f"{failpoint} never fired: {p.stderr[-500:]}"
    r = walkback("agent", "resume", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{run_dir}: completed"
    return ws, run_dir


def one_commit_per_step(run_dir: Path) -> None:
    recs = records(run_dir)
    intents = {i["lsn"]: i["step"] for i in of_type(recs, "intent")}
    commits = Counter(intents[c["ref"]] for c in of_type(recs, "commit"))
    assert commits == Counter(range(41)), "a step was committed twice or never"
    assert Counter(intents.values()) == Counter(range(41)), "a step's intent was issued twice"
    check = walkback("check", str(run_dir))
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_rename_killed_at_file_23_resumes_at_file_24(
    tmp_path: Path, clean_rename: dict[str, bytes]
) -> None:
    ws, run_dir = crash_then_resume(tmp_path, "apply.after_tmp_write:23")
    assert tree(ws) == clean_rename
    one_commit_per_step(run_dir)
    recs = records(run_dir)
    (rec,) = of_type(recs, "recovery")
    crashed = next(i for i in of_type(recs, "intent") if i["lsn"] == rec["ref"])
    assert crashed["step"] == 22 and crashed["target"] == "users/handler_22.py"  # the 23rd file
    assert (rec["finding"], rec["action"]) == ("not_applied", "redo")
    after = [i["step"] for i in of_type(recs, "intent") if i["lsn"] > rec["lsn"]]
    assert after == list(range(23, 41))
    assert not list(ws.rglob("*.wb-tmp"))


@pytest.mark.parametrize(
    "failpoint",
    [
        "write.intent.mid:5",
        "fsync.intent.after:5",
        "apply.after_tmp_fsync:5",
        "apply.after_rename:5",
        "apply.after_dir_fsync:5",
        "verify.after:5",
        "write.commit.before:5",
        "checkpoint.after_git_commit:2",
        "command.after_run",
    ],
)
def test_killed_anywhere_the_rename_ends_as_a_clean_run(
    tmp_path: Path, clean_rename: dict[str, bytes], failpoint: str
) -> None:
    ws, run_dir = crash_then_resume(tmp_path, failpoint)
    assert tree(ws) == clean_rename
    one_commit_per_step(run_dir)


def side_effect_task(tmp: Path) -> Path:
    """A task whose command is not idempotent: it appends a line to a file each time it runs."""
    task = tmp / "task.json"
    cmd = [sys.executable, "-c", "open('ran.log', 'a').write('ran\\n')"]
    task.write_text(
        json.dumps(
            {
                "title": "side effect",
                "setup": {"files": [{"path": "README", "content": "x\n"}]},
                "steps": [
                    {"tool": "run_command", "args": {"cmd": cmd}},
                    {"tool": "write_file", "args": {"path": "after.txt", "content": "after\n"}},
                ],
            }
        )
    )
    make_workspace(load_task(task), tmp / "ws")
    p = agent_run(task, tmp / "ws", tmp / "run", env={"WALKBACK_FAILPOINT": "command.after_run"})
    assert p.returncode == -9
    return tmp / "run"


@pytest.mark.parametrize("decision,runs", [("deny", 1), ("approve", 2)])
def test_an_in_doubt_command_is_left_to_a_human(tmp_path: Path, decision: str, runs: int) -> None:
    run_dir = side_effect_task(tmp_path)
    asked: list[str] = []

    def human(req: object) -> object:
        asked.append(req.reason)
        return (approve_all if decision == "approve" else deny_all)(req)  # type: ignore[arg-type]

    assert resume_run(run_dir, approver=human).status == "completed"
    assert len(asked) == 1 and asked[0].startswith("in doubt after a crash")
    recs = records(run_dir)
    (rec,) = of_type(recs, "recovery")
    assert (rec["finding"], rec["action"]) == ("in_doubt", "ask_human")
    first = of_type(recs, "intent")[0]
    fail = next(f for f in of_type(recs, "fail") if f["ref"] == first["lsn"])
    assert fail["in_doubt"] is True
    assert (tmp_path / "ws" / "ran.log").read_text() == "ran\n" * runs
    assert (tmp_path / "ws" / "after.txt").read_text() == "after\n"


def test_an_ended_run_is_not_resumed_and_runs_are_found_by_id(tmp_path: Path, walkback_home: Path) -> None:
    ws = scratch("rename", tmp_path / "ws")
    result = start_run("rename", ws, approver=approve_all)
    assert result.run_dir.parent == walkback_home / "runs"
    with pytest.raises(AgentError, match="already ended"):
        resume_run(result.run_dir.name, approver=approve_all)
    p = walkback("agent", "resume", "no-such-run")
    assert p.returncode == 1 and p.stderr.startswith("Error: no run 'no-such-run'")
