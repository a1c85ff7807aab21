"""The journaled loop: intent (durable) -> apply -> verify -> commit, one planner step at a time.

The harness writes the journal, never the planner. For each action it computes the target's pre
and post hashes, puts both images in the intent (a big one in the blob store first), appends the
intent (the writer fsyncs it), applies the effect, verifies it (post hash, the step's check command,
the command's exit code or the HTTP status) and only then appends a ``commit``; "committed" means
verified. On resume it first settles
what the journal leaves open (unanswered approvals, in-doubt effects), then continues at the step
after the last settled one: committed work is never redone, a side effect never repeated blindly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from walkback.journal import failpoints
from walkback.journal.errors import AgentError
from walkback.journal.fileops import OS, FileOps
from walkback.journal.images import image_fields
from walkback.journal.writer import JournalWriter

from .actions import Action, PlanError
from .approvals import Approver, Policy
from .checkpoints import take_checkpoint
from .gate import ask_unanswered, gate, settle_open_intents
from .state import RunState
from .subagents import FanOut
from .tools import Prepared, ToolError, apply_file, call_external, observe, prepare, run_check, run_command

Progress = Callable[[str], None]


class Planner(Protocol):
    @property
    def name(self) -> str: ...

    def begin(self, h: Harness) -> None: ...

    def next_action(self, step: int, h: Harness) -> Action | None: ...

    def observe(self, step: int, action: Action, outcome: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    """Settings a run keeps for its whole life (stored in the header, handed to subagents)."""

    service_url: str | None = None
    approvals: str | None = None
    """Name of the non-interactive approver (``approve-all``, ``deny-all``) subagents inherit."""
    policy_file: str | None = None
    checkpoint_every: int = 0
    command_timeout: float = 300.0

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class Harness:
    """Drives one agent's journal. One instance per process per run directory."""

    def __init__(
        self,
        writer: JournalWriter,
        state: RunState,
        *,
        workspace: Path,
        planner: Planner,
        policy: Policy,
        approver: Approver,
        options: RunOptions,
        ops: FileOps = OS,
        on_event: Progress | None = None,
    ) -> None:
        self.writer = writer
        self.state = state
        self.workspace = workspace
        self.run_dir = writer.path.parent
        self.planner = planner
        self.policy = policy
        self.approver = approver
        self.options = options
        self.ops = ops
        self._emit_fn = on_event
        self.top_level = "parent" not in state.header

    # -- journal ------------------------------------------------------------------------------
    def append(self, type: str, **fields: Any) -> int:
        """Append a record and fold it into the state."""
        lsn = self.writer.append(type, **fields)
        self.state.note(lsn, {"type": type, **fields})
        return lsn

    def emit(self, msg: str) -> None:
        if self._emit_fn is not None:
            self._emit_fn(f"[{self.writer.agent}] {msg}")

    def reject(self, step: int, output: Any, error: str) -> None:
        """Journal a planner output that is not a valid action (it is never executed)."""
        self.append("plan", step=step, rejected=output, error=error)
        self.emit(f"step {step}: rejected planner output: {error}")

    # -- the loop -----------------------------------------------------------------------------
    def run(self) -> str:
        """Run (or continue) to the end; returns the ``run.end`` status."""
        st = self.state
        if st.ended:
            raise AgentError(f"this run already ended ({st.ended}); nothing to resume", path=self.writer.path)
        ask_unanswered(self)
        settle_open_intents(self)
        if st.failed_step() is not None:
            return self._end("failed")
        try:
            self.planner.begin(self)
            step = st.next_step()
            if step:
                self.emit(f"continuing at step {step} (steps 0..{step - 1} are settled)")
            while (action := self.planner.next_action(step, self)) is not None:
                ok = self._execute(step, action)
                if not ok:
                    return self._end("failed")
                step += 1
                every = self.options.checkpoint_every
                if action.tool == "spawn" or (every and step % every == 0):
                    take_checkpoint(self)
        except PlanError:
            self._end("failed")
            raise
        take_checkpoint(self)
        return self._end("completed")

    def _end(self, status: str) -> str:
        self.append("run.end", status=status)
        self.emit(f"run {status}")
        return status

    def _execute(self, step: int, action: Action) -> bool:
        if action.tool == "spawn":
            return FanOut(self).run_step(step, action)
        approval: int | None = None
        rule = self.policy.rule_for(action.tool, action.target)
        if rule is not None:
            approval, decision = gate(self, step, action, rule)
            if decision.decision == "deny":
                self.emit(
                    f"step {step} {action.tool} {action.target}: denied by {decision.approver}, skipped"
                )
                self.planner.observe(step, action, {"denied": decision.reason})
                return True
        try:
            prep = prepare(action, self.workspace)
        except ToolError as e:
            self.reject(step, action.to_json(), e.message)
            return False
        lsn = self._intent(step, prep, approval)
        return self.perform(lsn, prep, key=f"{self.writer.run}:{lsn}")

    def _intent(self, step: int, prep: Prepared, approval: int | None) -> int:
        a = prep.action
        fields: dict[str, Any] = {
            "tool": a.tool,
            "args": a.args,
            "target": a.target,
            "effect": a.effect,
            "step": step,
            "pre": prep.pre,
            "post": prep.post,
        }
        if a.effect == "fs":  # small images ride in the fsynced intent, big ones are blobs before it
            fields.update(image_fields(prep.pre_data, prep.post_data, self.writer.blobs))
        if a.effect == "external":
            fields["idempotency_key"] = f"{self.writer.run}:{self.writer.next_lsn}"
        if a.effect == "command":
            fields["idempotent"] = a.idempotent
        if a.check:
            fields["check"] = a.check
        if approval is not None:
            fields["approval"] = approval
        return self.append("intent", **fields)

    def perform(self, lsn: int, prep: Prepared, *, key: str, recovered: bool = False) -> bool:
        """Perform the intent ``lsn``, verify it, and append its commit (or fail)."""
        a = prep.action
        result: dict[str, Any] | None = None
        verified: dict[str, Any] = {"post": None, "check": None, "result": None}
        observed: str | None = None
        try:
            if a.effect == "fs":
                assert prep.path is not None
                if prep.pre != prep.post:
                    apply_file(prep.path, prep.post_data, self.ops, root=self.workspace)
                observed = observe(prep.path)
                verified["post"] = observed == prep.post
            elif a.effect == "command":
                r = run_command(
                    a.args["cmd"], a.args["cwd"], self.workspace, timeout=self.options.command_timeout
                )
                failpoints.failpoint("command.after_run")
                result, verified["result"] = r.to_json(), r.exit_code == 0
                if a.test:
                    self._test_result(" ".join(a.args["cmd"]), r.exit_code, r.output_tail)
            else:
                x = call_external(a.args["method"], a.args["url"], a.args.get("body"), key)
                failpoints.failpoint("external.after_call")
                result, verified["result"] = x.to_json(), x.ok
        except ToolError as e:
            self.append("fail", ref=lsn, error=e.message)
            self.emit(f"lsn {lsn} {a.tool} {a.target}: failed: {e.message}")
            return False
        if a.check and verified["post"] is not False and verified["result"] is not False:
            c = run_check(a.check, self.workspace, timeout=self.options.command_timeout)
            self._test_result(a.check, c.exit_code, c.output_tail)
            verified["check"] = {"cmd": a.check, "exit_code": c.exit_code}
        failpoints.failpoint("verify.after")
        ok = verified["post"] is not False and verified["result"] is not False
        ok = ok and (verified["check"] is None or verified["check"]["exit_code"] == 0)
        extra: dict[str, Any] = {"result": result} if result is not None else {}
        if recovered:
            extra["recovered"] = True
        if ok:
            self.append("commit", ref=lsn, post=observed, verified=verified, **extra)
            self.emit(f"step {a_step(self, lsn)} {a.tool} {a.target}: committed (lsn {lsn})")
        else:
            self.append("fail", ref=lsn, error=_why(verified, result), verified=verified, **extra)
            self.emit(
                f"step {a_step(self, lsn)} {a.tool} {a.target}: verification failed: {_why(verified, result)}"
            )
        self.planner.observe(a_step(self, lsn), a, {"ok": ok, "verified": verified, "result": result})
        return ok

    def _test_result(self, cmd: str, exit_code: int, tail: str) -> None:
        self.append("test.result", cmd=cmd, exit_code=exit_code, passed=exit_code == 0, output_tail=tail)


def a_step(h: Harness, lsn: int) -> int:
    return int(h.state.intents[lsn]["step"])


def _why(verified: dict[str, Any], result: dict[str, Any] | None) -> str:
    if verified["post"] is False:
        return "the target's hash after the write is not the intended post hash"
    if verified["result"] is False and result is not None:
        if "exit_code" in result:
            return f"exit code {result['exit_code']}"
        return f"HTTP status {result.get('status')}"
    check = verified.get("check") or {}
    return f"check `{check.get('cmd')}` exited {check.get('exit_code')}"
