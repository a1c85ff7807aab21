"""Subagents: parallel child processes with linked journals; adoption instead of a second spawn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agenthelp import ROOT, agent_run, of_type, records, scratch, tree
from walkback.agent.approvals import approve_all
from walkback.agent.demo import open_intent
from walkback.agent.demo_service import DemoService
from walkback.agent.runs import resume_run, start_run

CHILDREN = ["auth", "billing", "search"]


@pytest.fixture
def clean_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The workspace a clean multi-agent run leaves (with its own service)."""
    base = tmp_path_factory.mktemp("clean")
    ws = scratch("multi_agent", base / "ws")
    svc = DemoService(base / "svc")
    try:
        result = start_run(
            "multi_agent", ws, approver=approve_all, run_dir=base / "run", service_url=svc.start()
        )
    finally:
        svc.stop()
    assert result.status == "completed"
    return tree(ws)


def check_family(run_dir: Path) -> None:
    """Three spawns, three linked child journals, three ends; nothing spawned twice."""
    recs = records(run_dir)
    run = recs[0]["run"]
    spawns = of_type(recs, "agent.spawn")
    assert [s["child_agent"] for s in spawns] == CHILDREN
    ends = {e["ref"]: e for e in of_type(recs, "agent.end")}
    for s in spawns:
        assert s["child_run"] == f"{run}:{s['lsn']}" and s["child_dir"] == f"agents/{s['child_agent']}"
        child = records(run_dir / s["child_dir"])
        header = child[0]
        assert header["type"] == "run.start" and len(of_type(child, "run.start")) == 1
        assert header["run"] == s["child_run"] and header["agent"] == s["child_agent"]
        assert header["parent"] == {"run": run, "agent": "main", "lsn": s["lsn"], "dir": "../.."}
        assert [r["status"] for r in of_type(child, "run.end")] == ["completed"]
        assert ends[s["lsn"]]["outcome"] == "completed" and ends[s["lsn"]]["child_run"] == s["child_run"]
    assert len(ends) == 3


def test_fan_out_runs_three_children_as_parallel_processes(tmp_path: Path, service: DemoService) -> None:
    ws = scratch("multi_agent", tmp_path / "ws")
    run_dir = tmp_path / "run"
    result = start_run("multi_agent", ws, approver=approve_all, run_dir=run_dir, service_url=service.url)
    assert result.status == "completed"
    check_family(run_dir)
    pids = {int((run_dir / "agents" / c / "lock").read_text()) for c in CHILDREN}
    assert len(pids) == 3 and os.getpid() not in pids
    for c in CHILDREN:
        assert [t["passed"] for t in of_type(records(run_dir / "agents" / c), "test.result")] == [True]
    recs = records(run_dir)
    spawn_lsns = [s["lsn"] for s in of_type(recs, "agent.spawn")]
    ckpt = of_type(recs, "checkpoint")[0]
    assert ckpt["lsn"] > max(e["lsn"] for e in of_type(recs, "agent.end")) > max(spawn_lsns)


def test_children_really_run_at_the_same_time(tmp_path: Path) -> None:
    """Each child waits (a barrier) until all three have started: sequential children would time out."""
    run_dir = tmp_path / "run"
    barrier = (
        "import glob, sys, time\n"
        "end = time.monotonic() + 20\n"
        "while len(glob.glob(sys.argv[1] + '/agents/*/journal.jsonl')) < 3:\n"
        "    if time.monotonic() > end: sys.exit(1)\n"
        "    time.sleep(0.01)\n"
    )
    wait = {"tool": "run_command", "args": {"cmd": [sys.executable, "-c", barrier, str(run_dir)]}}
    children = [{"agent": c, "task": "wait for the others", "steps": [wait]} for c in CHILDREN]
    task = tmp_path / "task.json"
    task.write_text(
        json.dumps({"title": "barrier", "steps": [{"tool": "spawn", "args": {"children": children}}]})
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    assert start_run(task, ws, approver=approve_all, run_dir=run_dir).status == "completed"
    for c in CHILDREN:
        assert of_type(records(run_dir / "agents" / c), "commit")[0]["result"]["exit_code"] == 0


def test_a_resumed_parent_adopts_its_running_children(
    tmp_path: Path, service: DemoService, clean_tree: dict[str, bytes]
) -> None:
    ws = scratch("multi_agent", tmp_path / "ws")
    run_dir = tmp_path / "run"
    env = {"WALKBACK_FAILPOINT": "spawn.after_child_start:3", "WALKBACK_FAILPOINT_AGENT": "main"}
    p = agent_run("multi_agent", ws, run_dir, service=service.url, env=env)
    assert p.returncode == -9, p.stderr
    assert len(of_type(records(run_dir), "agent.spawn")) == 3 and of_type(records(run_dir), "agent.end") == []
    events: list[str] = []
    result = resume_run(run_dir, approver=approve_all, on_event=events.append)
    assert result.status == "completed"
    check_family(run_dir)
    assert sum("adopting subagent" in e for e in events) == 3
    assert tree(ws) == clean_tree


def test_a_crashed_child_is_resumed_by_its_live_parent(tmp_path: Path, service: DemoService) -> None:
    ws = scratch("multi_agent", tmp_path / "ws")
    run_dir = tmp_path / "run"
    env = {"WALKBACK_FAILPOINT": "apply.after_rename:1", "WALKBACK_FAILPOINT_AGENT": "billing"}
    p = agent_run("multi_agent", ws, run_dir, service=service.url, env=env)
    assert p.returncode == 0, p.stderr
    assert "subagent billing stopped without finishing; resuming it" in p.stderr
    check_family(run_dir)
    billing = records(run_dir / "agents" / "billing")
    (rec,) = of_type(billing, "recovery")
    assert rec["finding"] == "applied" and rec["action"] == "commit"
    assert [c.get("recovered", False) for c in of_type(billing, "commit")][0] is True


@pytest.mark.parametrize("failpoint", ["write.run.start.before", "write.run.start.mid"])
def test_a_child_killed_before_its_header_starts_afresh(
    tmp_path: Path, service: DemoService, failpoint: str
) -> None:
    ws = scratch("multi_agent", tmp_path / "ws")
    run_dir = tmp_path / "run"
    env = {"WALKBACK_FAILPOINT": failpoint, "WALKBACK_FAILPOINT_AGENT": "billing"}
    p = agent_run("multi_agent", ws, run_dir, service=service.url, env=env)
    assert p.returncode == 0, p.stderr
    check_family(run_dir)
    kept = list((run_dir / "agents" / "billing").glob("journal.jsonl.broken-header-*"))
    assert len(kept) == (1 if failpoint.endswith("mid") else 0)
    if kept:
        assert kept[0].read_bytes().startswith(b'{"v":1,"lsn":0,') and b"\n" not in kept[0].read_bytes()


def test_the_whole_process_group_killed_mid_task_recovers_to_the_clean_result(
    tmp_path: Path, service: DemoService, clean_tree: dict[str, bytes]
) -> None:
    ws = scratch("multi_agent", tmp_path / "ws")
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "walkback",
            "agent",
            "run",
            "multi_agent",
            "--workspace",
            str(ws),
            "--run-dir",
            str(run_dir),
            "--approve-all",
            "--service",
            service.url,
        ],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if any(open_intent(j, "run_command") for j in (run_dir / "agents").glob("*/journal.jsonl")):
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.003)
    assert proc.wait() == -signal.SIGKILL
    assert resume_run(run_dir, approver=approve_all).status == "completed"
    check_family(run_dir)
    assert tree(ws) == clean_tree
    assert list(service.effects_by_key().values()) == [1]
