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

import orjson  # noqa: E402
from walkback.agent.demo_service import DemoService  # noqa: E402
from walkback.agent.task import load_task, make_workspace  # noqa: E402
from walkback.journal.record import sha256_bytes  # noqa: E402

SAMPLES = {
    "rename-clean": "the rename of getUserById across 40 files, start to finish",
    "rename-crashed": "the same rename killed with SIGKILL at file 23 (temp file written, not renamed)",
    "rename-recovered": "that crashed run after `walkback agent resume` (file 23 redone, then 24..40)",
    "multi-agent": "a parent fanning out three subagents (own journals under agents/), then a gated release",
    "demo": "what `walkback demo` leaves: the multi-agent run killed mid-task, recovered and finished",
    "release-in-doubt": "an approval-gated release killed right after its external call: in doubt, keyed",
    "seed-lsn": "the seed's lsn dialect as 002 writes it: the 40-file rename dead at file 23 (commits carry"
    " their intent's lsn, a checkpoint the lsn it covers)",
    "seed-seq": "the seed's seq dialect as 004 writes it: a keyed http_post in doubt after the crash",
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


def seed_samples() -> None:
    """The two seed dialects exactly as the seed articles write them (no workspace: journals only)."""
    task = "rename getUserById -> fetchUser"
    rename: list[dict[str, object]] = [
        {"lsn": 1, "type": "plan", "task": task, "files": 40, "base": "git:4e1a2c7"},
    ]
    for n in range(1, 24):  # LSN N+1 is file N; the process died during file 23
        old = f"import {{ getUserById }} from './users';\nexport const f{n} = getUserById;\n".encode()
        rename.append({"lsn": n + 1, "type": "intent", "tool": "replace_symbol", "file": f"src/api/f{n}.ts",
                       "old": "getUserById", "new": "fetchUser", "pre": sha256_bytes(old),
                       "post": sha256_bytes(old.replace(b"getUserById", b"fetchUser"))})  # fmt: skip
        if n < 23:
            rename.append({"lsn": n + 1, "type": "commit", "verified": "hash==post && tsc --noEmit ok"})
        if n == 10:
            rename.append({"lsn": n + 1, "type": "checkpoint", "git": "b81d0fa"})
    calls: list[dict[str, object]] = [
        {"seq": 1, "task_id": "run7", "tool": "read_file", "args": {"path": "billing/plan.md"},
         "idempotency_key": "run7:1"},
        {"seq": 1, "result": {"bytes": 812}, "status": "ok"},
        {"seq": 2, "task_id": "run7", "tool": "http_post",
         "args": {"url": "http://127.0.0.1:9/charges", "body": {"customer": "c-42", "amount": 1200}},
         "idempotency_key": "run7:2"},
    ]  # fmt: skip
    for name, records in (("seed-lsn", rename), ("seed-seq", calls)):
        dest = HERE / name
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        (dest / "journal.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def main() -> None:
    seed_samples()
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
