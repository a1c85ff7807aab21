"""``walkback agent``: one clear error line, the documented exit code, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from agenthelp import of_type, records, scratch, walkback


def test_a_task_file_that_is_not_json_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "task.json"
    bad.write_text('{\n  "title": "x",\n  "steps": [,]\n}\n')
    p = walkback("agent", "run", str(bad), "--workspace", str(tmp_path))
    assert p.returncode == 1
    assert p.stderr == f"Error: {bad}:3: task file is not valid JSON: Expecting value\n"


def test_an_invalid_step_is_journaled_and_never_executed(tmp_path: Path) -> None:
    task = tmp_path / "task.json"
    task.write_text(
        json.dumps(
            {
                "title": "t",
                "steps": [
                    {"tool": "write_file", "args": {"path": "ok.txt", "content": "x"}},
                    {"tool": "write_file", "args": {"path": "../../etc/evil", "content": "x"}},
                ],
            }
        )
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    p = walkback("agent", "run", str(task), "--workspace", str(ws), "--run-dir", str(tmp_path / "run"))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.splitlines()[-1] == (
        f"Error: {task}: step 1: path '../../etc/evil' leaves the workspace or touches .git"
    )
    recs = records(tmp_path / "run")
    (rej,) = of_type(recs, "plan")
    assert (
        rej["step"] == 1 and rej["rejected"]["args"]["path"] == "../../etc/evil" and "leaves" in rej["error"]
    )
    assert of_type(recs, "intent") == [] and recs[-1]["status"] == "failed"
    assert not (ws / "ok.txt").exists(), "the plan is checked whole before the first step runs"


def test_the_journal_may_not_live_inside_the_workspace(tmp_path: Path) -> None:
    ws = scratch("rename", tmp_path / "ws")
    p = walkback("agent", "run", "rename", "--workspace", str(ws), "--run-dir", str(ws / "run"))
    assert p.returncode == 1
    assert p.stderr == f"Error: {ws / 'run'}: the run directory must not be inside the workspace it edits\n"


def test_usage_errors(tmp_path: Path) -> None:
    p = walkback("agent", "run", "rename", "--workspace", str(tmp_path), "--approve-all", "--deny-all")
    assert p.returncode == 2 and "exclude each other" in p.stderr
    p = walkback("agent", "run", "nonesuch", "--workspace", str(tmp_path))
    assert p.returncode == 1
    assert p.stderr == "Error: no task file 'nonesuch' (shipped tasks: multi_agent, release, rename)\n"
    p = walkback("agent", "run", "release", "--workspace", str(scratch("release", tmp_path / "ws")))
    assert p.returncode == 1 and "step 2 needs ${service} (pass --service URL?)" in p.stderr


def test_help_lists_the_public_commands_only() -> None:
    out = walkback("agent", "--help").stdout
    assert "run " in out and "resume " in out and "child" not in out
    assert "demo" in walkback("--help").stdout
