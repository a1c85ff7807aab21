"""--apply is idempotent, refuses a live run, and works from inside the process that holds the lock."""

from __future__ import annotations

from pathlib import Path

import pytest
from recovery_helpers import Run, hold_lock
from walkback.agent.demo_service import DemoService
from walkback.journal import FileOps, RecoveryError, scan
from walkback.journal.recovery import analyze, recover
from walkback.journal.runlock import RunLock

NEW = b"def fetchUser(i):\n    return i\n\nx = fetchUser(1)\n"


def mixed(run: Run, url: str) -> None:
    """One of each: not applied, torn, applied, keyed call, unkeyed call, command, approval."""
    run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser", step=1)
    run.file_intent("write_file", "src/keep.py", b"KEEP = 2\n", content="KEEP = 2\n", step=2)
    (run.ws / "src/keep.py").write_bytes(b"KEE")
    run.file_intent("delete_file", "README.md", None, step=3)
    (run.ws / "README.md").unlink()
    run.external(url + "/release", {"v": 2}, step=4)
    run.external(url + "/notify", keyed=False, step=5)
    run.command(["make", "deploy"], step=6)
    run.w.append(
        "approval.request", tool="x", target="y", action={"tool": "x", "args": {}}, reason="r", step=7
    )
    run.w.close()


def snapshot(run: Run) -> dict[str, bytes]:
    files = {
        str(p.relative_to(run.ws)): p.read_bytes()
        for p in run.ws.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }
    return {"journal": run.journal.read_bytes(), **files}


def test_apply_twice_changes_nothing_the_second_time(run: Run, service: DemoService) -> None:
    mixed(run, service.url)
    first = recover(run.dir, apply=True)
    assert [(f.finding, f.action, f.done) for f in first.findings] == [
        ("not_applied", "redo", True),
        ("torn", "restore_redo", True),
        ("applied", "commit", True),
        ("in_doubt", "reissue", True),
        ("in_doubt", "ask_human", False),
        ("in_doubt", "ask_human", False),
        ("unanswered_approval", "ask_again", False),
    ]
    assert scan(run.journal).intact
    before = snapshot(run)
    second = recover(run.dir, apply=True)
    assert snapshot(run) == before
    assert [(f.lsn, f.finding, f.action) for f in second.findings] == [
        (f.lsn, f.finding, f.action) for f in first.findings if not f.done
    ]
    assert service.effects_by_key() == {"r1:4": 1}
    assert second.next_lsn == first.next_lsn and second.committed_through == 4


def test_analyze_changes_nothing(run: Run, service: DemoService) -> None:
    mixed(run, service.url)
    before = snapshot(run)
    analyze(run.dir)
    assert snapshot(run) == before and service.calls() == []


def test_a_live_run_is_not_recovered(run: Run) -> None:
    run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    with hold_lock(run.dir) as held:
        with pytest.raises(RecoveryError, match=f"live \\(pid {held.pid} holds its lock\\)"):
            recover(run.dir, apply=True)
        plan = analyze(run.dir)
        assert plan.live and plan.findings == []
        assert "the run is live" in plan.brief
    assert recover(run.dir, apply=True).findings[0].done


def test_the_process_holding_the_lock_may_recover(run: Run) -> None:
    lsn = run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    with RunLock(run.dir):
        plan = recover(run.dir, apply=True)
    assert (plan.findings[0].lsn, plan.findings[0].done) == (lsn, True)


class Recording(FileOps):
    """Real file operations that also log what they did (the power-loss tests' layer)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def replace(self, src: Path, dst: Path) -> None:
        self.log.append(("replace", dst.name))
        super().replace(src, dst)

    def fsync_dir(self, path: Path) -> None:
        self.log.append(("fsync_dir", path.name))
        super().fsync_dir(path)

    def fdatasync(self, fd: int) -> None:
        self.log.append(("fdatasync", ""))
        super().fdatasync(fd)


def test_every_durable_write_goes_through_the_given_file_ops(run: Run) -> None:
    run.file_intent("write_file", "src/a.txt", b"a\n", content="a\n")
    run.w.close()
    ops = Recording()
    recover(run.dir, apply=True, ops=ops)
    assert (run.ws / "src/a.txt").read_bytes() == b"a\n"
    assert ops.log == [
        ("fdatasync", ""),  # the decision, before the effect
        ("replace", "a.txt"),
        ("fsync_dir", "src"),
        ("fdatasync", ""),  # the commit, on close
        ("fdatasync", ""),  # the resume brief (recovery.brief), on close
    ]
