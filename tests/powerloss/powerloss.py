"""Record a real rename run through :class:`crashfs.RecordingOps`, then settle each crash state.

:func:`record` runs ``rename3.json`` in-process with the recorder as the run's ``ops`` (journal,
blobs and file tools all write through it) in a scratch git repository. :func:`settle` writes one
crash state back in place (same absolute paths: the journal names its workspace), then does what a
user would after the power came back — ``resume`` (which recovers first) — and classifies what
happened. The only unacceptable outcome is a run that carries on to a result other than the clean
run's, or that loses a record that was durable.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from crashfs import CrashState, RecordingOps, materialise

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "torture"))

from oracle import Fingerprint, fingerprint, tree  # noqa: E402
from walkback.agent.approvals import approve_all  # noqa: E402
from walkback.agent.runs import resume_run, start_run  # noqa: E402
from walkback.agent.task import load_task, make_workspace  # noqa: E402
from walkback.journal.errors import AgentError, JournalDamaged, WalkbackError  # noqa: E402
from walkback.journal.reader import read_records  # noqa: E402
from walkback.journal.recovery import analyze  # noqa: E402
from walkback.journal.writer import JOURNAL_NAME  # noqa: E402

TASK = Path(__file__).resolve().parent / "rename3.json"
JOURNAL = f"run/{JOURNAL_NAME}"


@dataclass
class Recorded:
    """A clean run, its operation log and what any crash state must recover to."""

    root: Path
    ops: RecordingOps
    golden: dict[str, bytes]
    meaning: Fingerprint
    initial: dict[str, bytes]
    git: Path
    """A copy of the workspace's ``.git`` at the end (git is durable: ``core.fsync=all``)."""
    dirs: list[str]

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def run_dir(self) -> Path:
        return self.root / "run"


def record(base: Path, recorder: type[RecordingOps] = RecordingOps) -> Recorded:
    """Run the task cleanly through ``recorder`` under ``base/live``."""
    root = base / "live"
    ws = root / "ws"
    make_workspace(load_task(TASK), ws)
    initial = tree(ws)
    ops = recorder(root)
    result = start_run(TASK, ws, approver=approve_all, run_dir=root / "run", ops=ops)
    assert result.status == "completed"
    shutil.copytree(ws / ".git", base / "git-final")
    dirs = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_dir() and ".git" not in p.relative_to(root).parts
    )
    records, _ = read_records(root / JOURNAL)
    return Recorded(
        root, ops, tree(ws), fingerprint([r.data for r in records]), initial, base / "git-final", dirs
    )


@dataclass(frozen=True)
class Settled:
    outcome: str
    """``recovered`` (resumed to the end), ``ended`` (``run.end`` was durable), ``never-started``
    (no durable header: nothing happened), ``flagged`` (refused, with a human's question or a
    corruption report), or ``WRONG``."""
    problems: tuple[str, ...] = ()
    detail: str = ""


def settle(rec: Recorded, state: CrashState) -> Settled:
    """Materialise ``state`` in place, resume, and judge the result."""
    shutil.rmtree(rec.root)
    materialise(state, rec.root, rec.dirs)
    shutil.copytree(rec.git, rec.ws / ".git")
    journal = rec.root / JOURNAL
    if b"\n" not in state.files.get(JOURNAL, b""):
        same = tree(rec.ws) == rec.initial
        return Settled("never-started", () if same else ("no durable header, yet the workspace changed",))
    try:
        resume_run(rec.run_dir, approver=approve_all)
        outcome, detail = "recovered", ""
    except AgentError as e:
        outcome, detail = ("ended", "") if "already ended" in e.message else ("refused", str(e))
    except WalkbackError as e:
        outcome, detail = "refused", str(e)
    problems = _lost(journal, state)
    if outcome == "refused":
        if not _flagged(rec, detail):
            return Settled("WRONG", (f"refused without flagging a human: {detail}", *problems), detail)
        return Settled("flagged", tuple(problems), detail)
    problems += _compare(rec, journal)
    return Settled("WRONG" if problems else outcome, tuple(problems), detail)


def _flagged(rec: Recorded, detail: str) -> bool:
    """A refusal is acceptable when it names damage or recovery left a question for a human."""
    if "damaged" in detail or "corrupt" in detail:
        return True
    try:
        plan = analyze(rec.run_dir)
    except JournalDamaged:
        return True
    return any(f.action == "ask_human" for f in plan.all_findings())


def _lost(journal: Path, state: CrashState) -> list[str]:
    """What was durable at the crash is still the journal's beginning, byte for byte."""
    durable = state.durable.get(JOURNAL, b"")
    durable = durable[: durable.rfind(b"\n") + 1]
    now = journal.read_bytes() if journal.exists() else b""
    return [] if now.startswith(durable) else [f"durable journal bytes lost ({len(durable)} were durable)"]


def _compare(rec: Recorded, journal: Path) -> list[str]:
    problems = []
    got = tree(rec.ws)
    if got != rec.golden:
        diff = sorted(k for k in got.keys() | rec.golden.keys() if got.get(k) != rec.golden.get(k))
        problems.append(f"workspace differs from the clean run's in {diff}")
    records, result = read_records(journal)
    if not result.intact:
        problems.append(f"journal not intact after recovery: {result.damage_summary()}")
    meaning = fingerprint([r.data for r in records])
    if meaning != rec.meaning:
        problems.append(
            f"journal means something else: extra {dict(meaning - rec.meaning)}, "
            f"missing {dict(rec.meaning - meaning)}"
        )
    return problems
