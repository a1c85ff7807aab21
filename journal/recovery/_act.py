"""Acting on findings: journal the decision (fsynced, in the journal's dialect), then act.

Crash-safety comes from the order and from re-observing: a rerun classifies every still-open
intent again from the workspace as it is. A decision equal to the last one journaled for the same
intent is not journaled again; a changed one (torn, then killed after the restore: now
``not_applied``) is. An intent is closed only by a commit (the post hash verified, and the
intent's ``check`` passing) or a fail, so a second run finds nothing to repeat.

Failpoints (``WALKBACK_FAILPOINT``): ``recovery.before_decision``, ``recovery.after_decision``,
``recovery.after_restore``, ``recovery.after_apply``, ``recovery.after_commit``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from walkback.journal import failpoints
from walkback.journal.errors import RecoveryError
from walkback.journal.fileops import OS, FileOps, sweep_temps
from walkback.journal.record import sha256_file

from . import _effects
from ._dialect import Appender
from ._images import Image
from ._observe import Step


class Actor:
    """Applies the steps of one journal."""

    def __init__(
        self,
        appender: Appender,
        workspace: Path | None,
        decisions: dict[tuple[int, int | None], tuple[str, str]],
        *,
        ops: FileOps = OS,
    ) -> None:
        self.out = appender
        self.workspace = workspace
        self.decisions = decisions
        self.ops = ops
        self.unit = "seq" if appender.dialect == "seq" else "lsn"

    def run(self, step: Step) -> None:
        """Journal the decision about ``step`` unless it is already the last one, then act."""
        p, f = step.pending, step.finding
        key: tuple[int, int | None] = (p.lsn, None)
        if p.kind == "lost":
            assert p.ref is not None
            key = (p.ref, p.lsn)
        if self.decisions.get(key) != (f.finding, f.action):
            failpoints.failpoint("recovery.before_decision")
            self.out.decision(p, f.finding, f.action, f.detail)
            self.decisions[key] = (f.finding, f.action)
            failpoints.failpoint("recovery.after_decision")
        act = getattr(self, "_" + f.action)
        act(step)

    # -- actions ------------------------------------------------------------------------------
    def _commit(self, step: Step) -> None:
        self._close_file(step, "the effect had landed")

    def _redo(self, step: Step) -> None:
        if step.pending.effect == "command":
            self._rerun(step)
            return
        assert step.path is not None and step.post is not None
        self._put(step.path, step.post)
        failpoints.failpoint("recovery.after_apply")
        self._close_file(step, f"redone from {step.post.source}")

    def _restore_redo(self, step: Step) -> None:
        assert step.path is not None and step.post is not None
        restored = "no pre image"
        if step.pre is not None:
            self._put(step.path, step.pre)
            restored = f"restored from {step.pre.source}"
            failpoints.failpoint("recovery.after_restore")
        self._put(step.path, step.post)
        failpoints.failpoint("recovery.after_apply")
        self._close_file(step, f"{restored}, redone from {step.post.source}")

    def _reissue(self, step: Step) -> None:
        p = step.pending
        assert p.key is not None
        try:
            result = _effects.reissue(p.tool, p.args, p.key)
        except OSError as e:
            step.finding.outcome = f"reissue failed ({e}); still in doubt: run recover again"
            return
        failpoints.failpoint("recovery.after_apply")
        status = result["status"]
        said = f"reissued with key {p.key}: HTTP {status}"
        self._settle(step, 200 <= status < 300, result, said, f"reissued call answered HTTP {status}")

    def _ask_human(self, step: Step) -> None:
        step.finding.outcome = "left for a human"

    def _ask_again(self, step: Step) -> None:
        step.finding.outcome = "to be asked again"

    def _none(self, step: Step) -> None:
        step.finding.outcome = "nothing to undo"

    # -- helpers ------------------------------------------------------------------------------
    def _put(self, path: Path, img: Image) -> None:
        assert self.workspace is not None
        _effects.put_image(path, img, root=self.workspace, ops=self.ops)

    def _rerun(self, step: Step) -> None:
        assert self.workspace is not None
        p = step.pending
        code, tail = _effects.run_command(self.workspace, p.args)
        failpoints.failpoint("recovery.after_apply")
        result = {"exit_code": code, "output_tail": tail}
        error = f"command ran again and exited {code}"
        self._settle(step, code == 0, result, f"ran again: exit {code}", error)

    def _settle(self, step: Step, ok: bool, result: dict[str, Any], said: str, error: str) -> None:
        """Journal the outcome of a re-run effect: commit when it succeeded, else fail."""
        p = step.pending
        if ok:
            verified = {"post": None, "check": None, "result": True}
            lsn = self.out.commit(p, post=None, verified=verified, result=result)
            step.finding.outcome = f"{said}; committed ({self.unit} {lsn})"
        else:
            lsn = self.out.fail(p, error, result)
            step.finding.outcome = f"{said}; failed ({self.unit} {lsn})"
        step.finding.done = True
        failpoints.failpoint("recovery.after_commit")

    def _close_file(self, step: Step, how: str) -> None:
        """Verify the post hash (and the intent's check), then commit; a failed check fails it."""
        assert step.path is not None and self.workspace is not None
        p = step.pending
        sweep_temps(step.path, ops=self.ops)  # what a crash mid-write left beside it
        h = sha256_file(step.path)
        if h != p.post:
            raise RecoveryError(
                f"lsn {p.lsn}: {p.target} hashes to {h} after recovery, not {p.post}; "
                "something else is writing the workspace",
                path=step.path,
            )
        check = None
        if p.check:
            code, _ = _effects.run_check(self.workspace, p.check)
            check = {"cmd": p.check, "exit_code": code}
            if code != 0:
                lsn = self.out.fail(p, f"check failed after recovery (exit {code})", {"check": check})
                step.finding.outcome = f"{how}; check exited {code}: failed ({self.unit} {lsn})"
                step.finding.done = True
                return
        lsn = self.out.commit(p, post=h, verified={"post": True, "check": check, "result": None})
        step.finding.outcome = f"{how}; post hash verified; committed ({self.unit} {lsn})"
        step.finding.done = True
        failpoints.failpoint("recovery.after_commit")
