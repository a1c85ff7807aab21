"""``walkback demo``: a multi-agent run killed with SIGKILL mid-task, recovered, resumed, finished.

Everything is real: a scratch git repository, the demo service on 127.0.0.1, the agent and its
three subagents as separate processes. The demo watches the subagents' journals and, the moment
one of them is running its tests (an intent journaled, no commit yet), sends SIGKILL to the whole
process group — parent and children. Then it shows what recovery finds (without acting), resumes
the run (recovery applies, the parent adopts its children, the run continues at its next step)
and checks the outcome: run completed, tests green, every keyed call acted exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from walkback.journal.errors import AgentError
from walkback.journal.writer import JOURNAL_NAME

from .demo_service import DemoService
from .state import RunState
from .task import load_task, make_workspace

TASK = "multi_agent"
POLICY = {
    "rules": [
        {
            "tool": "external_call",
            "approval": "required",
            "decision": "approve",
            "reason": "demo: releases are approved by this policy file",
        }
    ]
}
Emit = Callable[[str], None]


@dataclass
class DemoResult:
    base: Path
    workspace: Path
    run_dir: Path
    status: str
    killed_at: str
    """What was in flight when the kill landed."""
    findings: list[dict[str, Any]] = field(default_factory=list)
    brief: str = ""
    effects_by_key: dict[str | None, int] = field(default_factory=dict)
    seconds: float = 0.0


def open_intent(journal: Path, tool: str) -> str | None:
    """``"<agent> lsn N <target>"`` if the journal has an intent of ``tool`` without commit/fail yet."""
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        return None
    open_: dict[int, dict[str, Any]] = {}
    for line in data.split(b"\n")[:-1]:
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if rec.get("type") == "intent" and rec.get("tool") == tool:
            open_[rec["lsn"]] = rec
        elif rec.get("type") in ("commit", "fail"):
            open_.pop(rec.get("ref"), None)
    for lsn, rec in open_.items():
        return f"{rec.get('agent')} lsn {lsn} {rec.get('tool')} ({rec.get('target')})"
    return None


def _agent(args: list[str], emit: Emit, **kw: Any) -> subprocess.Popen[str]:
    """Start ``python -m walkback agent ...`` in its own process group, relaying its output lines."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "walkback", "agent", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        **kw,
    )

    def relay(stream: IO[str]) -> None:
        for line in stream:
            emit("    " + line.rstrip("\n"))

    assert proc.stdout is not None
    threading.Thread(target=relay, args=(proc.stdout,), daemon=True).start()
    return proc


def run_demo(base: Path, *, emit: Emit, kill_timeout: float = 60.0) -> DemoResult:
    """Run the whole demo under ``base`` (a new or empty directory)."""
    from walkback.journal.recovery import analyze

    t0 = time.monotonic()
    base = base.resolve()
    if base.exists() and any(base.iterdir()):
        raise AgentError("the demo needs a new or empty directory", path=base)
    ws, run_dir = base / "repo", base / "runs" / "demo"
    task = load_task(TASK)
    emit(f"1. scratch git repository: {ws}")
    make_workspace(task, ws)
    svc = DemoService(base / "service")
    url = svc.start()
    policy = base / "policy.json"
    policy.write_bytes(orjson.dumps(POLICY, option=orjson.OPT_INDENT_2))
    emit(f"2. demo release service on {url} (honours Idempotency-Key; calls logged to {svc.calls_path})")
    try:
        emit(f"3. agent run: {task.title}")
        common = ["--policy", str(policy), "--service", url]
        proc = _agent(["run", TASK, "--workspace", str(ws), "--run-dir", str(run_dir), *common], emit)
        killed_at = _kill_when_testing(proc, run_dir, kill_timeout)
        emit(f"4. kill -9 of the agent's process group (pid {proc.pid} and its subagents) while {killed_at}")
        plan = analyze(run_dir)
        findings = [f.to_json() | {"agent": f.agent} for f in plan.all_findings()]
        emit("5. what recovery finds (walkback recover --json, read-only):")
        for f in findings:
            where = f"[{f['agent']}] lsn {f['lsn']} {f['tool']} {f['target']}"
            emit(f"     {where}: {f['finding']} -> {f['action']}")
        emit("   resume brief:")
        for line in plan.brief.splitlines():
            emit("     " + line)
        emit("6. agent resume: recover (apply), adopt the subagents, continue at the next step")
        resumed = _agent(["resume", str(run_dir), *common], emit)
        if resumed.wait() != 0:
            raise AgentError(f"the resumed run exited with code {resumed.returncode}", path=run_dir)
        status = RunState.load(run_dir / JOURNAL_NAME).ended or "unknown"
        effects = svc.effects_by_key()
    finally:
        svc.stop()
    emit(f"7. run {status}; release service effects by idempotency key: {effects}")
    return DemoResult(
        base, ws, run_dir, status, killed_at, findings, plan.brief, effects, time.monotonic() - t0
    )


def _kill_when_testing(proc: subprocess.Popen[str], run_dir: Path, timeout: float) -> str:
    """SIGKILL the agent's process group as soon as a subagent journals a test run not yet committed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for journal in sorted((run_dir / "agents").glob(f"*/{JOURNAL_NAME}")):
            found = open_intent(journal, "run_command")
            if found:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return f"{found} was running"
        if proc.poll() is not None:
            raise AgentError(
                f"the agent exited (code {proc.returncode}) before the demo could kill it", path=run_dir
            )
        time.sleep(0.003)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AgentError(f"no subagent started its tests within {timeout:g}s", path=run_dir)
