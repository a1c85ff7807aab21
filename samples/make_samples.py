"""Regenerate the sample run directories in samples/ with the real agent loop (one command).

    python samples/make_samples.py

Each sample is a run directory (journal, blobs, subagents) made by ``walkback agent`` in a scratch
repository under a temporary directory, which is deleted afterwards (the header's ``workspace``
path is therefore stale; viewing does not need it). Crashes are real: SIGKILL at a named failpoint.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from walkback.agent.demo_service import DemoService  # noqa: E402
from walkback.agent.task import load_task, make_workspace  # noqa: E402

SAMPLES = {
    "rename-clean": "the rename of getUserById across 40 files, start to finish",
    "rename-crashed": "the same rename killed with SIGKILL at file 23 (temp file written, not renamed)",
    "rename-recovered": "that crashed run after `walkback agent resume` (file 23 redone, then 24..40)",
    "multi-agent": "a parent fanning out three subagents (own journals under agents/), then a gated release",
    "demo": "what `walkback demo` leaves: the multi-agent run killed mid-task, recovered and finished",
    "release-in-doubt": "an approval-gated release killed right after its external call: in doubt, keyed",
}


def walkback(*args: str, failpoint: str | None = None, check: bool = True) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK_FAILPOINT")}
    if failpoint:
        env["WALKBACK_FAILPOINT"] = failpoint
    p = subprocess.run([sys.executable, "-m", "walkback", *args], env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(f"walkback {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p.returncode


def agent_run(task: str, tmp: Path, name: str, *extra: str, failpoint: str | None = None) -> Path:
    ws, run_dir = tmp / f"{name}-ws", tmp / name
    make_workspace(load_task(task), ws)
    code = walkback(
        "agent",
        "run",
        task,
        "--workspace",
        str(ws),
        "--run-dir",
        str(run_dir),
        *extra,
        failpoint=failpoint,
        check=failpoint is None,
    )
    if failpoint and code != -9:
        raise SystemExit(f"{name}: failpoint {failpoint} did not fire (exit {code})")
    return run_dir


def keep(run_dir: Path, name: str) -> None:
    """Copy a run directory into samples/ without its lock files."""
    dest = HERE / name
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(run_dir, dest, ignore=shutil.ignore_patterns("lock", "*.index*"))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="walkback-samples-") as t:
        tmp = Path(t)
        svc = DemoService(tmp / "service")
        url = svc.start()
        try:
            keep(agent_run("rename", tmp, "rename-clean"), "rename-clean")
            crashed = agent_run("rename", tmp, "rename", failpoint="apply.after_tmp_write:23")
            keep(crashed, "rename-crashed")
            walkback("agent", "resume", str(crashed))
            keep(crashed, "rename-recovered")
            keep(agent_run("multi_agent", tmp, "multi", "--approve-all", "--service", url), "multi-agent")
            gated = agent_run(
                "release", tmp, "release", "--approve-all", "--service", url, failpoint="external.after_call"
            )
            keep(gated, "release-in-doubt")
        finally:
            svc.stop()
        walkback("demo", "--no-open", "--dir", str(tmp / "demo"))
        keep(tmp / "demo" / "runs" / "demo", "demo")
    for name, what in SAMPLES.items():
        print(f"samples/{name}/: {what}")


if __name__ == "__main__":
    main()
