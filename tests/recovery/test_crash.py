"""Killed during recovery (SIGKILL at a failpoint, in a real subprocess), a rerun finishes the job.

Each case builds the same crashed run, runs ``walkback recover --apply`` in a subprocess armed with
``WALKBACK_FAILPOINT=<name>:<nth>``, checks it really died, recovers again, and compares with a
recovery that was never interrupted: same workspace bytes, every intent closed exactly once, each
decision journaled before its commit, the keyed call acted on once, an intact journal, and a
third run that appends nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from recovery_helpers import Run, h, make_repo
from walkback.agent.demo_service import DemoService
from walkback.journal import JournalWriter, scan
from walkback.journal.recovery import recover

NEW = b"def fetchUser(i):\n    return i\n\nx = fetchUser(1)\n"


def crashed_run(root: Path, url: str) -> Run:
    """Not applied, torn, applied, keyed call, unkeyed call, approval, a lost intent, and a child."""
    ws = root / "ws"
    base = make_repo(ws)
    w = JournalWriter.create(root / "run", task="crash test", run="c1", workspace=str(ws), base_ref=base)
    run = Run(root / "run", ws, w, base)
    run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser", step=0)
    run.file_intent("write_file", "src/keep.py", b"KEEP = 2\n", content="KEEP = 2\n", step=1)
    (ws / "src/keep.py").write_bytes(b"KEE")
    run.file_intent("delete_file", "README.md", None, step=2)
    (ws / "README.md").unlink()
    run.external(url + "/release", {"v": 2}, step=3)
    run.external(url + "/notify", keyed=False, step=4)
    w.append("approval.request", tool="x", target="y", action={"tool": "x", "args": {}}, reason="r", step=5)
    spawn = w.append(
        "agent.spawn", child_run="c1:7", child_agent="kid", child_dir="agents/kid", task="t", step=6
    )
    child = JournalWriter.create(
        root / "run/agents/kid", task="kid", run=f"c1:{spawn}", agent="kid", workspace=str(ws), base_ref=base
    )
    child.blobs.put(b"kid\n")
    child.append(
        "intent", tool="write_file", args={"path": "kid.txt", "content": "kid\n"}, target="kid.txt",
        effect="fs", step=0, pre="absent", post=h(b"kid\n"),
    )  # fmt: skip
    child.close()
    w.close()
    with open(run.journal, "ab") as f:  # the next intent was being appended when the agent died
        f.write(b'{"v":1,"lsn":8,"ts":"x","run":"c1","agent":"main","type":"intent","tool":"write_file","ta')
    return run


def outcome(run: Run) -> dict[str, Any]:
    files = {
        str(p.relative_to(run.ws)): p.read_bytes()
        for p in sorted(run.ws.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }
    journals = {}
    for j in (run.journal, run.dir / "agents/kid/journal.jsonl"):
        assert scan(j).intact, j
        recs = [orjson.loads(x) for x in j.read_bytes().splitlines()]
        closed = [r["ref"] for r in recs if r["type"] in ("commit", "fail")]
        assert len(closed) == len(set(closed)), f"an intent closed twice in {j}"
        for r in recs:
            if r["type"] == "commit":  # decided (fsynced) before acted on
                assert any(
                    d["type"] == "recovery" and d["ref"] == r["ref"] and d["lsn"] < r["lsn"] for d in recs
                )
        lost = [(r["lost_lsn"], r["finding"]) for r in recs if r["type"] == "recovery" and "lost_lsn" in r]
        journals[j.parent.name] = {"closed": sorted(closed), "lost": sorted(set(lost))}
    return {"files": files, "journals": journals}


CASES = [
    "repair.after_copy:1",
    "repair.after_truncate:1",
    "write.journal.recovered.mid:1",
    "recovery.before_decision:1",
    "recovery.after_decision:1",
    "recovery.after_decision:2",
    "write.recovery.mid:3",
    "fsync.recovery.before:3",
    "recovery.after_restore:1",
    "recovery.after_apply:1",
    "recovery.after_apply:2",
    "recovery.after_apply:3",
    "write.commit.mid:2",
    "recovery.after_commit:3",
    "recovery.after_commit:4",
    "recovery.after_decision:6",
    "recovery.before_decision:8",
    "recovery.after_apply:4",
]


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("golden")
    svc = DemoService(root / "svc")
    svc.start()
    try:
        run = crashed_run(root, svc.url)
        recover(run.dir, apply=True)
        return outcome(run)
    finally:
        svc.stop()


def recover_in_subprocess(run: Run, failpoint: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK")}
    env["WALKBACK_FAILPOINT"] = failpoint
    return subprocess.run(
        [sys.executable, "-m", "walkback", "recover", str(run.dir), "--apply", "--json"],
        env=env,
        capture_output=True,
        timeout=60,
    )


@pytest.mark.parametrize("failpoint", CASES)
def test_killed_during_recovery_a_rerun_finishes_the_job(
    tmp_path: Path,
    service: DemoService,
    golden: dict[str, Any],
    failpoint: str,
) -> None:
    run = crashed_run(tmp_path, service.url)
    p = recover_in_subprocess(run, failpoint)
    assert p.returncode == -9, (p.returncode, p.stderr.decode()[-2000:])
    recover(run.dir, apply=True)
    assert outcome(run) == golden
    assert service.effects_by_key() == {"c1:4": 1}
    before = [j.read_bytes() for j in (run.journal, run.dir / "agents/kid/journal.jsonl")]
    again = recover(run.dir, apply=True)
    assert [j.read_bytes() for j in (run.journal, run.dir / "agents/kid/journal.jsonl")] == before
    assert [(f.finding, f.action) for f in again.all_findings()] == [
        ("in_doubt", "ask_human"),
        ("unanswered_approval", "ask_again"),
    ]


def test_golden_recovery_closed_what_it_may_and_left_the_rest(golden: dict[str, Any]) -> None:
    assert golden["journals"]["run"] == {"closed": [1, 2, 3, 4], "lost": [(8, "never_started")]}
    assert golden["journals"]["kid"] == {"closed": [1], "lost": []}
    files = golden["files"]
    assert files["src/users.py"] == NEW and files["src/keep.py"] == b"KEEP = 2\n" and "README.md" not in files
    assert files["kid.txt"] == b"kid\n"
