"""Recovery of real agent journals: the agent loop killed with SIGKILL at a failpoint, then recovered.

Each crashed run is made by ``walkback agent run`` in a real subprocess. Recovery must classify the
interrupted step exactly, apply idempotently, and leave a run that ``walkback agent resume``
finishes with the same workspace as a run that was never killed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from walkback.agent.approvals import approve_all
from walkback.agent.demo_service import DemoService
from walkback.agent.runs import start_run
from walkback.agent.task import load_task, make_workspace
from walkback.journal import scan
from walkback.journal.recovery import analyze, recover
from walkback.journal.runlock import lock_is_held


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WALKBACK_HOME", str(tmp_path / "home"))
    for var in ("WALKBACK_FAILPOINT", "WALKBACK_FAILPOINT_AGENT", "WALKBACK_FAILPOINT_HELD"):
        monkeypatch.delenv(var, raising=False)


def walkback(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "walkback", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def tree(ws: Path) -> dict[str, bytes]:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(ws).parts and "__pycache__" not in p.parts
    }


def records(journal: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in journal.read_bytes().split(b"\n") if x.strip()]


def clean_tree(base: Path, task: str, service: str | None = None) -> dict[str, bytes]:
    ws = base / "ws"
    make_workspace(load_task(task), ws)
    result = start_run(task, ws, approver=approve_all, run_dir=base / "run", service_url=service)
    assert result.status == "completed"
    return tree(ws)


def killed(tmp: Path, task: str, failpoint: str, *extra: str, agent: str | None = None) -> tuple[Path, Path]:
    ws, run_dir = tmp / "ws", tmp / "run"
    env = {"WALKBACK_FAILPOINT": failpoint, **({"WALKBACK_FAILPOINT_AGENT": agent} if agent else {})}
    p = walkback(
        "agent", "run", task, "--workspace", str(ws), "--run-dir", str(run_dir), "--setup", *extra, env=env
    )
    if agent in (None, "main"):  # the process killed is the top-level agent
        assert p.returncode == -9, f"{failpoint} never fired: {p.stderr[-800:]}"
    return ws, run_dir


def apply_twice(run_dir: Path) -> Any:
    plan = recover(run_dir, apply=True)
    assert scan(run_dir / "journal.jsonl").intact
    before = (run_dir / "journal.jsonl").read_bytes()
    recover(run_dir, apply=True)
    assert (run_dir / "journal.jsonl").read_bytes() == before
    return plan


def resume(run_dir: Path, *extra: str) -> None:
    r = walkback("agent", "resume", str(run_dir), *extra)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith(": completed")


# -- the rename across 40 files --------------------------------------------------------------------
@pytest.fixture(scope="module")
def clean_rename(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return clean_tree(tmp_path_factory.mktemp("clean-rename"), "rename")


@pytest.mark.parametrize(
    ("failpoint", "finding", "action"),
    [
        ("apply.after_tmp_write:23", "not_applied", "redo"),
        ("apply.after_rename:23", "applied", "commit"),
        ("verify.after:23", "applied", "commit"),
        ("write.commit.mid:23", "applied", "commit"),
        ("write.intent.mid:23", "never_started", "none"),
    ],
)
def test_rename_killed_at_file_23(
    tmp_path: Path, clean_rename: dict[str, bytes], failpoint: str, finding: str, action: str
) -> None:
    ws, run_dir = killed(tmp_path, "rename", failpoint)
    plan = analyze(run_dir)
    [f] = plan.findings
    assert (f.target, f.tool, f.step, f.finding, f.action) == (
        "users/handler_22.py", "replace_symbol", 22, finding, action,
    )  # fmt: skip
    assert plan.committed_through == f.lsn - 1
    assert f"lsn {f.lsn} (step 22) replace_symbol users/handler_22.py" in plan.brief
    applied = apply_twice(run_dir)
    assert [(g.lsn, g.finding, g.action) for g in applied.findings] == [(f.lsn, finding, action)]
    recs = records(run_dir / "journal.jsonl")
    closing = [r for r in recs if r["type"] == "commit" and r.get("ref") == f.lsn]
    if action == "none":
        assert closing == [] and not (run_dir / "journal.jsonl.broken").exists()
    else:
        assert [c["recovered"] for c in closing] == [True]
        assert (ws / "users/handler_22.py").read_bytes() == clean_rename["users/handler_22.py"]
    assert not list(ws.rglob("*.wb-tmp"))
    resume(run_dir)
    assert tree(ws) == clean_rename


def test_rename_with_a_torn_target_is_restored_and_redone(
    tmp_path: Path, clean_rename: dict[str, bytes]
) -> None:
    ws, run_dir = killed(tmp_path, "rename", "fsync.intent.after:23")
    (ws / "users/handler_22.py").write_bytes(b"def fetchUs")  # a tool that wrote in place, cut short
    [f] = analyze(run_dir).findings
    assert (f.finding, f.action) == ("torn", "restore_redo") and "restore pre from the intent" in f.detail
    out = walkback("recover", str(run_dir), "--apply", "--json")
    doc = orjson.loads(out.stdout)
    assert [(x["lsn"], x["finding"], x["action"]) for x in doc["findings"]] == [
        (f.lsn, "torn", "restore_redo")
    ]
    assert "restored from the intent" in doc["brief"]  # its images are inline
    resume(run_dir)
    assert tree(ws) == clean_rename


# -- the approval-gated release with external calls -------------------------------------------------


@pytest.fixture(scope="module")
def clean_release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    base = tmp_path_factory.mktemp("clean-release")
    svc = DemoService(base / "svc")
    try:
        return clean_tree(base, "release", svc.start())
    finally:
        svc.stop()


@pytest.mark.parametrize(
    ("failpoint", "tool", "finding", "action"),
    [
        ("verify.after:1", "write_file", "applied", "commit"),
        ("external.after_call:1", "external_call", "in_doubt", "reissue"),
        ("approval.after_request:2", "external_call", "unanswered_approval", "ask_again"),
    ],
)
def test_release_killed(
    tmp_path: Path,
    service: DemoService,
    clean_release: dict[str, bytes],
    failpoint: str,
    tool: str,
    finding: str,
    action: str,
) -> None:
    ws, run_dir = killed(tmp_path, "release", failpoint, "--service", service.url, "--approve-all")
    [f] = analyze(run_dir).findings
    assert (f.tool, f.finding, f.action) == (tool, finding, action)
    plan = apply_twice(run_dir)
    recs = records(run_dir / "journal.jsonl")
    [dec] = [r for r in recs if r["type"] == "recovery"]
    assert (dec["ref"], dec["finding"], dec["action"]) == (f.lsn, finding, action)
    closing = [r for r in recs if r["type"] == "commit" and r.get("ref") == f.lsn]
    if action == "commit":
        [c] = closing
        assert c["verified"]["check"]["exit_code"] == 0  # the intent's own check ran again
    if action == "reissue":
        [c] = closing
        assert c["result"]["replayed"] is True and plan.findings[0].done
    if action == "ask_again":
        assert closing == [] and "ask again for approval" in plan.brief
    resume(run_dir, "--approve-all")
    assert tree(ws) == clean_release
    assert set(service.effects_by_key().values()) == {1}  # every keyed call acted exactly once


# -- subagents -------------------------------------------------------------------------------------
def test_a_killed_subagent_is_recovered_by_its_restart(tmp_path: Path, service: DemoService) -> None:
    clean = clean_tree(tmp_path / "clean", "multi_agent", service.url)
    ws, run_dir = killed(
        tmp_path,
        "multi_agent",
        "apply.after_tmp_write:1",
        "--service",
        service.url,
        "--approve-all",
        agent="auth",
    )
    child = records(run_dir / "agents/auth/journal.jsonl")
    [dec] = [r for r in child if r["type"] == "recovery"]
    assert (dec["agent"], dec["finding"], dec["action"]) == ("auth", "not_applied", "redo")
    assert [c["ref"] for c in child if c.get("recovered")] == [dec["ref"]]
    plan = analyze(run_dir)  # finished: read from its last checkpoint, after every child ended
    assert plan.read_from is not None and plan.all_findings() == []
    assert tree(ws) == clean


def test_a_parent_killed_after_its_spawns_is_analysed_with_its_children(
    tmp_path: Path, service: DemoService
) -> None:
    clean = clean_tree(tmp_path / "clean", "multi_agent", service.url)
    extra = ("--service", service.url, "--approve-all")
    ws, run_dir = killed(tmp_path, "multi_agent", "spawn.after_child_start:3", *extra, agent="main")
    for child in ("auth", "billing", "search"):  # the children outlive their parent and finish
        deadline = time.monotonic() + 60
        while lock_is_held(run_dir / "agents" / child) and time.monotonic() < deadline:
            time.sleep(0.05)
    plan = analyze(run_dir)
    assert sorted(c.agent for c in plan.children) == ["auth", "billing", "search"]
    assert all(c.run.startswith(plan.run + ":") and not c.live for c in plan.children)
    assert plan.all_findings() == []
    assert "agent auth: Committed through lsn" in plan.brief
    apply_twice(run_dir)
    resume(run_dir, "--approve-all")
    assert tree(ws) == clean
