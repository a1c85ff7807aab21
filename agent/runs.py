"""Starting, resuming and running subagents: run directories, locks, recovery, then the harness.

Run directories live outside the workspace: ``$WALKBACK_HOME/runs/<run>/`` (default
``~/.walkback/runs/<run>/``) unless the caller names one. The run lock is held for the whole life
of the run. Resuming calls :func:`journal.recovery.recover` with ``apply=True`` first (torn tail,
unfinished intents), then lets the harness ask again what was never answered and continue.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.journal import failpoints
from walkback.journal.errors import AgentError
from walkback.journal.fileops import OS, FileOps
from walkback.journal.reader import Scanner
from walkback.journal.runlock import RunLock, lock_is_held
from walkback.journal.writer import JOURNAL_NAME, JournalWriter

from .approvals import APPROVERS, Approver, Policy
from .gitutil import head, is_repo
from .harness import Harness, Planner, Progress, RunOptions
from .planners import OpenAIPlanner, ScriptedPlanner
from .state import RunState
from .subagents import SPEC_NAME
from .task import expand_steps, load_task


@dataclass(frozen=True)
class PlannerOptions:
    """``scripted`` (the task file's steps) or ``openai`` (an OpenAI-compatible endpoint)."""

    kind: str = "scripted"
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None


@dataclass
class RunResult:
    run_dir: Path
    status: str
    recovery: Any = None
    """The :class:`journal.recovery.RecoveryPlan` a resume applied first (None for a new run)."""


def runs_root() -> Path:
    home = os.environ.get("WALKBACK_HOME")
    return (Path(home) if home else Path.home() / ".walkback") / "runs"


def find_run(run: str | Path) -> Path:
    """A run directory, a journal file, or a run id under :func:`runs_root`."""
    p = Path(run)
    if p.name == JOURNAL_NAME and p.is_file():
        return p.parent.resolve()
    if (p / JOURNAL_NAME).is_file():
        return p.resolve()
    q = runs_root() / str(run)
    if (q / JOURNAL_NAME).is_file():
        return q
    raise AgentError(f"no run {str(run)!r}: not a run directory, and not a run id under {runs_root()}")


def arm_failpoints(agent: str) -> None:
    """Honour ``WALKBACK_FAILPOINT_AGENT``: a failpoint armed for another agent is disarmed here."""
    target = os.environ.get("WALKBACK_FAILPOINT_AGENT")
    if target and target != agent and "WALKBACK_FAILPOINT" in os.environ:
        os.environ["WALKBACK_FAILPOINT_HELD"] = os.environ.pop("WALKBACK_FAILPOINT")
        failpoints.rearm()


def _outside(run_dir: Path, workspace: Path) -> None:
    r, w = run_dir.resolve(), workspace.resolve()
    if r == w or w in r.parents:
        raise AgentError("the run directory must not be inside the workspace it edits", path=run_dir)


def start_run(
    task_name: str | Path,
    workspace: Path,
    *,
    approver: Approver,
    run_dir: Path | None = None,
    policy_file: Path | None = None,
    approvals: str | None = None,
    service_url: str | None = None,
    planner: PlannerOptions | None = None,
    ops: FileOps = OS,
    on_event: Progress | None = None,
) -> RunResult:
    """Start a new run of a task in ``workspace``; returns when it ends (or stops for an approval)."""
    arm_failpoints("main")
    task = load_task(task_name)
    ws = Path(workspace).resolve()
    if not ws.is_dir():
        raise AgentError("workspace is not a directory", path=workspace)
    run_id = uuid.uuid4().hex[:12]
    run_dir = Path(run_dir).resolve() if run_dir else runs_root() / run_id
    _outside(run_dir, ws)
    policy = _with_policy_file(Policy.from_json(task.policy, source="task", path=task.path), policy_file)
    options = RunOptions(
        service_url=service_url,
        approvals=approvals,
        policy_file=str(policy_file) if policy_file else None,
        checkpoint_every=task.checkpoint_every,
    )
    popts = planner or PlannerOptions()
    plan: Planner
    if popts.kind == "openai":
        if not popts.base_url or not popts.model:
            raise AgentError("the openai planner needs a base URL and a model")
        plan = OpenAIPlanner(
            base_url=popts.base_url, model=popts.model, task=task.title, api_key=popts.api_key
        )
    else:
        steps = expand_steps(task, ws, {"service": service_url} if service_url else {})
        plan = ScriptedPlanner(steps, source=str(task.path))
    ops.mkdir(run_dir)
    with RunLock(run_dir):
        if (run_dir / JOURNAL_NAME).exists():
            discard_headerless(run_dir / JOURNAL_NAME, ops)  # killed before its header: never started
        if (run_dir / JOURNAL_NAME).exists():
            raise AgentError(
                "this run directory already holds a journal; use `walkback agent resume`", path=run_dir
            )
        header: dict[str, Any] = {
            "task_file": str(task.path),
            "workspace": str(ws),
            "base_ref": head(ws) if is_repo(ws) else None,
            "planner": plan.name,
            "policy": policy.to_json(),
            "options": options.to_json(),
        }
        if popts.kind == "openai":
            header["planner_options"] = {"base_url": popts.base_url, "model": popts.model}
        with JournalWriter.create(run_dir, task=task.title, run=run_id, ops=ops, **header) as writer:
            if on_event:
                on_event(f"[main] run {run_id} started: {task.title} (journal {writer.path})")
            h = Harness(writer, RunState.load(writer.path), workspace=ws, planner=plan, policy=policy,
                        approver=approver, options=options, ops=ops, on_event=on_event)  # fmt: skip
            return RunResult(run_dir, h.run())


def read_header(run_dir: Path) -> dict[str, Any]:
    """The ``run.start`` record (readable even when the tail is torn)."""
    for rec in Scanner(run_dir / JOURNAL_NAME):
        return rec.data
    raise AgentError("journal has no readable header", path=run_dir / JOURNAL_NAME)


def _resumable(run_dir: Path) -> Path:
    """The workspace of a run the agent can resume, checked before anything is touched: a v1
    journal of a top-level run whose header names an existing absolute workspace (a seed-dialect
    journal names none, and the current directory is never assumed)."""
    jpath = run_dir / JOURNAL_NAME
    header = read_header(run_dir)
    if "parent" in header:
        raise AgentError("this is a subagent's run; resume its top-level run instead", path=run_dir)
    if "v" not in header:
        raise AgentError(
            "the agent continues only v1 journals, not a seed dialect; recover it with "
            "`walkback recover RUN --workspace DIR --apply`",
            path=jpath,
        )
    named = header.get("workspace")
    if not isinstance(named, str) or not Path(named).is_absolute():
        raise AgentError(
            "the run's header names no workspace; recover it with `walkback recover RUN --workspace DIR "
            "--apply`",
            path=jpath,
        )
    if not Path(named).is_dir():
        raise AgentError(f"the run's workspace {named} does not exist", path=jpath)
    return Path(named)


def recover_first(run_dir: Path, workspace: Path, on_event: Progress | None) -> Any:
    """Run recovery (apply) on a run directory that nobody is writing."""
    from walkback.journal.recovery import recover

    if lock_is_held(run_dir):
        raise AgentError("this run is still running (its lock is held)", path=run_dir)
    plan = recover(run_dir, workspace=workspace, apply=True)
    if on_event:
        for f in plan.findings:
            on_event(f"[recovery] lsn {f.lsn} {f.tool} {f.target}: {f.finding} -> {f.action}")
    return plan


def resume_run(
    run: str | Path,
    *,
    approver: Approver,
    policy_file: Path | None = None,
    service_url: str | None = None,
    api_key: str | None = None,
    ops: FileOps = OS,
    on_event: Progress | None = None,
) -> RunResult:
    """Recover a stopped run, ask again what was never answered, and continue at the next step."""
    arm_failpoints("main")
    run_dir = find_run(run)
    ws = _resumable(run_dir)
    recovery = recover_first(run_dir, ws, on_event)
    with RunLock(run_dir):
        state = RunState.load(run_dir / JOURNAL_NAME)
        task_policy = Policy.from_json(state.header.get("policy") or [], source="task")
        policy = _with_policy_file(task_policy, policy_file)
        stored = dict(state.header.get("options") or {})
        if service_url:
            stored["service_url"] = service_url
        options = RunOptions(**stored)
        plan = _planner_for(state, ws, options, api_key)
        with JournalWriter.open(run_dir, ops=ops) as writer:
            if on_event:
                on_event(f"[main] resuming run {writer.run} (journal {writer.path})")
            h = Harness(writer, state, workspace=ws, planner=plan, policy=policy,
                        approver=approver, options=options, ops=ops, on_event=on_event)  # fmt: skip
            return RunResult(run_dir, h.run(), recovery)


def _with_policy_file(policy: Policy, policy_file: Path | None) -> Policy:
    """A policy file's rules come first; the task's own rules answer what it leaves open."""
    return Policy.load(policy_file).then(policy) if policy_file else policy


def _planner_for(state: RunState, ws: Path, options: RunOptions, api_key: str | None) -> Planner:
    header = state.header
    name = str(header.get("planner") or "scripted")
    if name.startswith("openai:"):
        po = header.get("planner_options") or {}
        return OpenAIPlanner(
            base_url=str(po.get("base_url")),
            model=str(po.get("model")),
            task=str(header.get("task")),
            api_key=api_key,
        )
    if state.plan is None and header.get("task_file"):
        # Killed between its header and its plan record: no step ran yet, so plan it again.
        task = load_task(str(header["task_file"]))
        values = {"service": options.service_url} if options.service_url else {}
        return ScriptedPlanner(expand_steps(task, ws, values), source=str(task.path))
    return ScriptedPlanner(None)


def discard_headerless(jpath: Path, ops: FileOps) -> None:
    """A journal killed before its header line was complete never started: nothing to recover.

    An empty file is removed; a partial header is kept aside as ``journal.jsonl.broken-header-<t>``.
    """
    data = jpath.read_bytes()
    if b"\n" in data:
        return
    if data:
        ops.replace(jpath, jpath.with_name(f"{jpath.name}.broken-header-{int(time.time())}"))
    else:
        ops.unlink(jpath)
    ops.fsync_dir(jpath.parent)


def run_child(child_dir: Path, *, ops: FileOps = OS, on_event: Progress | None = None) -> RunResult:
    """Run (or resume) a subagent from its ``child.json``; the process its parent starts runs this."""
    child_dir = Path(child_dir).resolve()
    try:
        spec = orjson.loads((child_dir / SPEC_NAME).read_bytes())
    except (OSError, orjson.JSONDecodeError) as e:
        raise AgentError(f"cannot read the subagent spec: {e}", path=child_dir / SPEC_NAME) from None
    arm_failpoints(str(spec["agent"]))
    ws = Path(spec["workspace"])
    jpath = child_dir / JOURNAL_NAME
    if jpath.exists():
        with RunLock(child_dir):
            discard_headerless(jpath, ops)
    recovery = recover_first(child_dir, ws, on_event) if jpath.exists() else None
    options = RunOptions(**spec.get("options") or {})
    policy = Policy.from_json(spec.get("policy") or [], source="parent")
    approver = APPROVERS[options.approvals or "none"]
    with RunLock(child_dir):
        if jpath.exists():
            writer = JournalWriter.open(jpath, ops=ops)
        else:
            writer = JournalWriter.create(
                child_dir,
                task=str(spec["task"]),
                run=str(spec["run"]),
                agent=str(spec["agent"]),
                ops=ops,
                task_file=str(child_dir / SPEC_NAME),
                workspace=str(ws),
                base_ref=None,
                planner="scripted",
                parent=spec["parent"],
                policy=policy.to_json(),
                options=options.to_json(),
            )
        with writer:
            state = RunState.load(jpath)
            h = Harness(
                writer,
                state,
                workspace=ws,
                planner=ScriptedPlanner(spec["steps"], source=str(jpath.parent)),
                policy=policy,
                approver=approver,
                options=options,
                ops=ops,
                on_event=on_event,
            )
            return RunResult(child_dir, h.run(), recovery)
