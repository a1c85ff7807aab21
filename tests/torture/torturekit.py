"""The crash-torture engine: run a task as real processes, SIGKILL them, resume until done, check.

A :class:`Case` says how a run dies: at a named failpoint (``WALKBACK_FAILPOINT=name:nth``, in the
main agent or one subagent) or after a seeded random delay (``SIGKILL`` to the whole process
group), and how each following ``walkback agent resume`` dies in turn. :meth:`Lab.run` starts
the task in a copy of a template workspace, inflicts the kills, resumes until a resume finishes,
and hands the result to :mod:`oracle`, which compares it with a clean run of the same task.

Shared by ``tests/torture/`` (pytest) and ``bench/torture.py`` (1,000 kills).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from oracle import Observed, check, golden_of, tree
from walkback.agent.demo_service import DemoService
from walkback.agent.task import load_task, make_workspace
from walkback.journal.errors import WalkbackError
from walkback.journal.reader import Scanner
from walkback.journal.writer import JOURNAL_NAME

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HOOK = HERE / "hook"
TIMEOUT = 120.0
"""Seconds any one process may take before the case is failed as hung."""


@dataclass(frozen=True)
class Scenario:
    name: str
    task: str
    """A shipped task name or a task file path."""
    service: bool = False
    """Needs the demo service (and ``--approve-all`` for the gated call)."""


SCENARIOS = {
    "rename5": Scenario("rename5", str(HERE / "small_rename.json")),
    "rename40": Scenario("rename40", "rename"),
    "multi": Scenario("multi", "multi_agent", service=True),
}


@dataclass(frozen=True)
class Crash:
    """One way to kill a process: a failpoint (in ``agent``, default every process) or a delay."""

    failpoint: str | None = None
    agent: str | None = None
    delay: float | None = None
    orphans: bool = False
    """Leave the subagents running when the main process dies (default: kill its whole group)."""

    def env(self) -> dict[str, str]:
        env = {"WALKBACK_FAILPOINT": self.failpoint} if self.failpoint else {}
        if self.failpoint and self.agent:
            env["WALKBACK_FAILPOINT_AGENT"] = self.agent
        return env

    @property
    def in_child(self) -> bool:
        return self.agent not in (None, "main")

    def __str__(self) -> str:
        if self.failpoint:
            where = f"@{self.agent}" if self.agent else ""
            return f"{self.failpoint}{where}" + ("+orphans" if self.orphans else "")
        return "no crash" if self.delay is None else f"kill after {self.delay:.3f}s"


@dataclass(frozen=True)
class Case:
    scenario: str
    crash: Crash
    resume_crashes: tuple[Crash, ...] = ()
    seed: int | None = None

    def __str__(self) -> str:
        seed = f"seed {self.seed} " if self.seed is not None else ""
        then = "".join(f" / resume {c}" for c in self.resume_crashes)
        return f"{seed}{self.scenario}: run {self.crash}{then}"


@dataclass
class Outcome:
    case: Case
    workdir: Path
    kills: int = 0
    problems: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    before_header: bool = False
    """The first kill landed before the journal's header existed (the run started again)."""
    observed: Observed | None = None
    started: float = 0.0
    """Unix time the first process was started."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def report(self) -> str:
        lines = [f"{self.case} ({self.kills} kills) in {self.workdir}", *self.history, *self.problems]
        return "\n  ".join(lines)


def base_env(workdir: Path) -> dict[str, str]:
    """The environment of every process of a case: no inherited crash switches, the side channel on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK")}
    env.update(
        WALKBACK_HOME=str(workdir / "home"),
        WALKBACK_TORTURE_ACKS=str(workdir / "acks.tsv"),
        PYTHONPATH=os.pathsep.join([str(HOOK), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _killpg(pid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def census_of(workdir: Path) -> Counter[tuple[str, str]]:
    """(agent, failpoint) -> how often the case's processes reached it (see ``hook/``)."""
    path = workdir / "census.tsv"
    lines = path.read_text().splitlines() if path.exists() else []
    return Counter((a, n) for a, _, n in (line.partition("\t") for line in lines))


def readable_types(run_dir: Path) -> list[str]:
    """The types of the readable records of the run's journal (none: it never really started)."""
    try:
        return [str(r.data.get("type")) for r in Scanner(run_dir / JOURNAL_NAME)]
    except WalkbackError:  # missing, empty or unusable: no header
        return []


class Lab:
    """One scenario's template workspace and golden (clean) run, made once and reused by its cases."""

    def __init__(self, scenario: Scenario, root: Path) -> None:
        self.scenario = scenario
        self.root = root
        self.template = root / "template"
        make_workspace(load_task(scenario.task), self.template)
        self.initial = tree(self.template)
        clean = self._execute(Case(scenario.name, Crash()), root / "clean", census=True)
        if clean.observed is None or clean.problems:
            raise AssertionError("the clean run failed:\n  " + clean.report())
        self.golden = golden_of(clean.observed, clean.seconds)
        first_ack = float((root / "clean" / "acks.tsv").read_text().split("\n", 1)[0].split("\t")[3])
        self.header_at = first_ack - clean.started
        """Seconds from starting the clean run until its header was durable (process start-up)."""
        self.census = census_of(root / "clean")
        """(agent, failpoint) -> times a clean run reaches it."""

    def run(self, case: Case, workdir: Path) -> Outcome:
        """Run one case in ``workdir`` (new) and check what it left against the clean run."""
        out = self._execute(case, workdir)
        if out.observed is not None:
            out.problems += check(out.observed, self.golden)
        return out

    def _execute(self, case: Case, workdir: Path, *, census: bool = False) -> Outcome:
        workdir.mkdir(parents=True)
        ws, log = workdir / "ws", workdir / "processes.log"
        shutil.copytree(self.template, ws, symlinks=True)
        out = Outcome(case, workdir)
        svc = DemoService(workdir / "service") if self.scenario.service else None
        common = ["--approve-all", "--service", svc.start()] if svc else []
        env = base_env(workdir)
        env["WALKBACK_TORTURE_CENSUS"] = str(workdir / "census.tsv")
        if census:  # a failpoint that never fires, so the writer reaches (and logs) all of its own
            env["WALKBACK_FAILPOINT"] = "census"
        d = _Driver(self, out, ws, env, log, common)
        t0 = time.monotonic()
        try:
            run_dir = d.drive(workdir / "run")
            out.seconds = time.monotonic() - t0
            if run_dir is not None:
                effects = svc.effects_by_key() if svc else {}
                out.observed = Observed(ws, run_dir, workdir / "acks.tsv", effects)
        except TimeoutError as e:
            out.problems.append(str(e))
        finally:
            if svc:
                svc.stop()
            for pgid in d.groups:
                _killpg(pgid)  # nothing should be left; never leak a process
        return out


class _Driver:
    """Starts, kills and resumes the processes of one case."""

    def __init__(
        self, lab: Lab, out: Outcome, ws: Path, env: dict[str, str], log: Path, common: list[str]
    ) -> None:
        self.lab, self.out, self.ws, self.env, self.log, self.common = lab, out, ws, env, log, common
        self.groups: list[int] = []

    def walkback(self, args: list[str], crash: Crash | None = None) -> int:
        """Run ``python -m walkback ARGS`` in a new process group, inflicting ``crash``; the exit code."""
        with open(self.log, "ab") as log:
            log.write(f"$ walkback {' '.join(args)}  [{crash or Crash()}]\n".encode())
            log.flush()
            proc = subprocess.Popen(
                [sys.executable, "-m", "walkback", *args],
                cwd=ROOT,
                env={**self.env, **(crash.env() if crash else {})},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.groups.append(proc.pid)
        delay = crash.delay if crash is not None else None
        try:
            rc = proc.wait(timeout=delay if delay is not None else TIMEOUT)
        except subprocess.TimeoutExpired:
            if delay is not None and crash is not None and crash.orphans:
                proc.kill()  # the main process alone; its subagents live on
            else:
                _killpg(proc.pid)
            rc = proc.wait()
            if delay is None:
                raise TimeoutError(f"walkback {' '.join(args)} hung for {TIMEOUT:g}s") from None
        if rc == -signal.SIGKILL and not (crash and crash.orphans):
            _killpg(proc.pid)  # the agent died, so do its subagents (a crash of the whole machine)
        return rc

    def drive(self, run_dir: Path) -> Path | None:
        """Start, kill, resume (killing resumes as the case says) until the run completes."""
        case, out = self.out.case, self.out
        out.started = time.time()
        rc = self.walkback(self._run_args(run_dir), case.crash)
        out.history.append(f"run [{case.crash}]: exit {rc}")
        if case.crash.in_child:
            return self._child_killed(run_dir, rc)
        if rc == 0:
            if case.crash.failpoint:
                out.problems.append(f"failpoint {case.crash} never fired")
            return run_dir
        if rc != -signal.SIGKILL:
            out.problems.append(f"the run failed (exit {rc}) instead of dying or finishing; see {self.log}")
            return None
        out.kills += 1
        if not readable_types(run_dir):
            return self._restart(run_dir)
        resume = ["agent", "resume", str(run_dir), *self.common]
        for crash in (*case.resume_crashes, None):
            if "run.end" in readable_types(run_dir):
                return self._ended(run_dir, resume)
            rc = self.walkback(resume, crash)
            out.history.append(f"resume [{crash or Crash()}]: exit {rc}")
            if rc == 0:
                return run_dir
            if rc != -signal.SIGKILL or crash is None:
                out.problems.append(f"resume failed with exit {rc}; see {self.log}")
                return None
            out.kills += 1
        return None

    def _run_args(self, run_dir: Path) -> list[str]:
        task = self.lab.scenario.task
        return ["agent", "run", task, "--workspace", str(self.ws), "--run-dir", str(run_dir), *self.common]

    def _child_killed(self, run_dir: Path, rc: int) -> Path | None:
        """A subagent died at its failpoint: the parent restarts it (if it had not ended) and finishes."""
        crash = self.out.case.crash
        name, _, nth = str(crash.failpoint).partition(":")
        if census_of(self.out.workdir)[(str(crash.agent), name)] < int(nth or 1):
            self.out.problems.append(f"failpoint {self.out.case.crash} never fired")
            return None
        self.out.kills += 1
        if rc != 0:
            self.out.problems.append(f"a subagent was killed and restarted, yet its parent exited {rc}")
            return None
        return run_dir

    def _ended(self, run_dir: Path, resume: list[str]) -> Path | None:
        """Killed after its ``run.end`` was written: finished; a resume must say so and do nothing."""
        rc = self.walkback(resume)
        last = self.log.read_bytes().decode("utf-8", "replace").rstrip().splitlines()[-1]
        self.out.history.append(f"killed after run.end; resume: exit {rc}")
        if rc != 1 or "already ended" not in last:
            self.out.problems.append(f"resume of an ended run: exit {rc}, {last!r}")
        return run_dir

    def _restart(self, run_dir: Path) -> Path | None:
        """Killed before its header was durable: nothing happened, and resume must refuse cleanly."""
        out = self.out
        out.before_header = True
        if tree(self.ws) != self.lab.initial:
            out.problems.append("killed before its journal had a header, yet the workspace changed")
        rc = self.walkback(["agent", "resume", str(run_dir), *self.common])
        last = self.log.read_bytes().decode("utf-8", "replace").rstrip().splitlines()[-1]
        if rc not in (1, 2) or not last.startswith("Error: "):
            out.problems.append(
                f"resume of a run without a header: exit {rc}, {last!r} (want an Error: line)"
            )
        fresh = run_dir.with_name("run-again")
        rc = self.walkback(self._run_args(fresh))
        out.history.append(f"killed before the header was durable; resume refused; run again: exit {rc}")
        if rc != 0:
            out.problems.append(f"the fresh run failed with exit {rc}")
            return None
        return fresh
