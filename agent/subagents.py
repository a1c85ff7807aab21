"""Fan-out: a ``spawn`` step starts its subagents as separate processes and waits for all of them.

Each child gets its own run directory ``<run-dir>/agents/<child>/`` holding ``child.json`` (its
steps, workspace, link to the parent) and, once it starts, its own journal whose header names the
parent; the parent's ``agent.spawn`` (fsynced before the process starts) names the child's run
id ``<run>:<spawn lsn>`` and directory. Re-entering a spawn step after a crash adopts the children
already spawned instead of spawning them twice: an ended child is left alone, a live one (its
lock held) is waited for, a crashed one is started again and resumes its own journal.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from walkback.journal import failpoints
from walkback.journal.effects import clean_env
from walkback.journal.errors import AgentError, WalkbackError
from walkback.journal.fileops import atomic_write
from walkback.journal.runlock import lock_is_held
from walkback.journal.writer import JOURNAL_NAME

from .actions import Action, ChildSpec
from .state import RunState

if TYPE_CHECKING:
    from .harness import Harness

SPEC_NAME = "child.json"
POLL = 0.05


def child_command(child_dir: Path) -> list[str]:
    return [sys.executable, "-m", "walkback", "agent", "child", str(child_dir)]


def child_env(*, restart: bool) -> dict[str, str]:
    """The environment a subagent starts with: the crash switches the parent was started with too.

    ``WALKBACK_FAILPOINT_AGENT=<id>`` limits ``WALKBACK_FAILPOINT`` to the agent with that id (see
    :func:`agent.runs.arm_failpoints`), so a torture test can kill one chosen subagent. A child
    restarted after it crashed gets no crash switches: a failpoint fires in the processes started
    with it, not again in every restart.
    """
    if restart:
        return clean_env()
    env = dict(os.environ)
    held = env.pop("WALKBACK_FAILPOINT_HELD", None)
    if held is not None:
        env["WALKBACK_FAILPOINT"] = held
    return env


def child_outcome(child_dir: Path) -> str | None:
    """The child's ``run.end`` status, or None if its journal has none (crashed, stopped, absent)."""
    if not (child_dir / JOURNAL_NAME).is_file():
        return None
    try:
        return RunState.load(child_dir / JOURNAL_NAME).ended
    except WalkbackError:  # damaged or headerless: the child did not end cleanly
        return None


class FanOut:
    """Runs one ``spawn`` step of a harness."""

    def __init__(self, h: Harness) -> None:
        self.h = h

    def run_step(self, step: int, action: Action) -> bool:
        h = self.h
        spawned = h.state.spawns_at(step)
        running: dict[str, tuple[int, subprocess.Popen[bytes] | None]] = {}
        for child in action.children:
            lsn = spawned.get(child.agent)
            if lsn is None:
                lsn = self._spawn(step, child)
                running[child.agent] = (lsn, self._launch(child.agent))
                failpoints.failpoint("spawn.after_child_start")
            elif lsn not in h.state.ends:
                running[child.agent] = (lsn, self._adopt(child.agent))
        outcomes = [self._finish(agent, lsn, proc) for agent, (lsn, proc) in running.items()]
        ok = all(o == "completed" for o in outcomes)
        ok = ok and all(
            h.state.ends[lsn].get("outcome") == "completed" for lsn in h.state.spawns_at(step).values()
        )
        return ok

    def _dir(self, agent: str) -> Path:
        return self.h.run_dir / "agents" / agent

    def _spawn(self, step: int, child: ChildSpec) -> int:
        h = self.h
        lsn = h.writer.next_lsn
        child_run = f"{h.writer.run}:{lsn}"
        d = self._dir(child.agent)
        h.ops.mkdir(d)
        if (d / JOURNAL_NAME).exists():
            raise AgentError(
                f"subagent {child.agent} already has a journal but no agent.spawn names it", path=d
            )
        spec: dict[str, Any] = {
            "run": child_run,
            "agent": child.agent,
            "task": child.task,
            "steps": [s.to_json() for s in child.steps],
            "parent": {"run": h.writer.run, "agent": h.writer.agent, "lsn": lsn, "dir": "../.."},
            "workspace": str(h.workspace),
            "policy": h.policy.to_json(),
            "options": h.options.to_json(),
        }
        atomic_write(d / SPEC_NAME, orjson.dumps(spec, option=orjson.OPT_INDENT_2), ops=h.ops)
        got = h.append(
            "agent.spawn",
            child_run=child_run,
            child_agent=child.agent,
            child_dir=f"agents/{child.agent}",
            task=child.task,
            step=step,
        )
        assert got == lsn
        h.emit(f"step {step}: spawned subagent {child.agent} as {child_run}")
        return lsn

    def _launch(self, agent: str, *, restart: bool = False) -> subprocess.Popen[bytes]:
        env = child_env(restart=restart)
        return subprocess.Popen(child_command(self._dir(agent)), env=env, stdin=subprocess.DEVNULL)

    def _adopt(self, agent: str) -> subprocess.Popen[bytes] | None:
        """A child spawned before a crash: wait for it if alive, else let it resume its journal."""
        d = self._dir(agent)
        if lock_is_held(d):
            self.h.emit(f"adopting subagent {agent}: still running, waiting for it")
            return None
        if child_outcome(d) is not None:
            self.h.emit(f"adopting subagent {agent}: it already finished")
            return None
        self.h.emit(f"adopting subagent {agent}: it stopped mid-task, resuming it")
        return self._launch(agent)

    def _finish(self, agent: str, lsn: int, proc: subprocess.Popen[bytes] | None) -> str:
        """Wait for the child, restart it once if it stopped without ``run.end``, journal ``agent.end``."""
        d = self._dir(agent)
        for attempt in range(2):
            if proc is not None:
                proc.wait()
            while lock_is_held(d):
                time.sleep(POLL)
            outcome = child_outcome(d)
            if outcome is not None:
                break
            if attempt == 0:
                self.h.emit(f"subagent {agent} stopped without finishing; resuming it")
                proc = self._launch(agent, restart=True)
        else:
            raise AgentError(
                f"subagent {agent} stopped twice without finishing; resume the run after fixing it",
                path=d / JOURNAL_NAME,
            )
        spawn = self.h.state.spawns[lsn]
        self.h.append("agent.end", ref=lsn, child_agent=agent, child_run=spawn["child_run"], outcome=outcome)
        self.h.emit(f"subagent {agent} ended: {outcome}")
        return outcome
