"""Helpers shared by the agent tests (imported as a plain module: tests/ is not a package)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from walkback.agent.task import load_task, make_workspace

ROOT = Path(__file__).resolve().parents[2]


def scratch(task: str, dest: Path) -> Path:
    """The scratch git repository a shipped task describes."""
    make_workspace(load_task(task), dest)
    return dest


def walkback(
    *args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m walkback ARGS`` as a real process."""
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "walkback", *args],
        cwd=ROOT,
        env=full,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def agent_run(
    task: str | Path,
    ws: Path,
    run_dir: Path,
    *extra: str,
    service: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``walkback agent run TASK --workspace WS --run-dir RUN`` (auto-approved against ``service``)."""
    args = ["agent", "run", str(task), "--workspace", str(ws), "--run-dir", str(run_dir)]
    if service:
        args += ["--approve-all", "--service", service]
    return walkback(*args, *extra, env=env)


def records(run_dir: Path) -> list[dict[str, Any]]:
    """Every record of a run's journal (complete lines only)."""
    data = (run_dir / "journal.jsonl").read_bytes()
    return [orjson.loads(line) for line in data.split(b"\n") if line.strip()]


def of_type(recs: list[dict[str, Any]], typ: str) -> list[dict[str, Any]]:
    return [r for r in recs if r["type"] == typ]


def tree(workspace: Path) -> dict[str, bytes]:
    """Every file of a workspace outside .git, by relative path."""
    return {
        p.relative_to(workspace).as_posix(): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts and "__pycache__" not in p.parts
    }
