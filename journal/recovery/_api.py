"""``analyze`` and ``recover``: one journal, then its subagents' journals, under the run's lock."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from walkback.journal.blobs import BlobStore
from walkback.journal.errors import RecoveryError, UnusableJournal
from walkback.journal.fileops import OS, FileOps
from walkback.journal.reader import open_journal
from walkback.journal.repair import repair
from walkback.journal.runlock import LOCK_NAME, RunLock, lock_is_held
from walkback.journal.writer import JOURNAL_NAME, JournalWriter, journal_path

from ._act import Actor
from ._brief import make_brief
from ._dialect import Appender
from ._images import Images
from ._observe import observe
from ._plan import RecoveryPlan
from ._read import Window, read_window


def analyze(path: str | Path, *, workspace: Path | None = None) -> RecoveryPlan:
    """Classify every unfinished intent of a journal (and its subagents'); change nothing.

    Args:
        path: a run directory or a journal file.
        workspace: the working tree the journal edits; defaults to the header's ``workspace``.
    """
    return recover(path, workspace=workspace, apply=False)


def recover(
    path: str | Path, *, workspace: Path | None = None, apply: bool = False, ops: FileOps = OS
) -> RecoveryPlan:
    """Analyze, and with ``apply`` repair a torn tail, journal each decision, then act on it.

    Acting restores and redoes end-state file intents from their images and commits them when the
    post hash verifies, reissues keyed external calls with the same key, and leaves everything in
    doubt to a human. Running it again changes nothing; killed half-way, a rerun finishes the job.

    Args:
        path: a run directory or a journal file.
        workspace: the working tree the journal edits; defaults to the header's ``workspace``.
        apply: act (otherwise only analyze).
        ops: the file operations for every durable write (the power-loss tests record them).

    Raises:
        UnusableJournal: ``path`` is not a journal.
        JournalDamaged: the journal has corruption (never repaired here).
        RecoveryError: the run is live, or the workspace is missing.
    """
    jpath = journal_path(Path(path))
    if not jpath.exists():
        raise UnusableJournal("no such journal (expected a run directory or a journal file)", path=jpath)
    open_journal(jpath).close()  # refuses a FIFO, a device or a directory at once
    explicit = Path(workspace) if workspace is not None else None
    return _Recovery(apply, ops).run(jpath, explicit, None, top=True)


def _lock_holder(run_dir: Path) -> int | None:
    """The pid of another live process holding the run's lock (-1 if unknown), else None."""
    if not lock_is_held(run_dir):
        return None
    try:
        pid = int((run_dir / LOCK_NAME).read_text().strip() or -1)
    except (OSError, ValueError):
        pid = -1
    return None if pid == os.getpid() else pid


def _workspace(header_ws: object, explicit: Path | None, rebase: tuple[Path, Path] | None) -> Path | None:
    """The given workspace, else the header's (moved along with the parent's, for a subagent)."""
    if explicit is not None:
        return explicit
    if not isinstance(header_ws, str) or not header_ws:
        return None
    ws = Path(header_ws)
    if rebase is not None:
        try:
            return rebase[1] / ws.relative_to(rebase[0])
        except ValueError:
            pass
    return ws


class _Recovery:
    """One recovery: a journal, then the journals of the subagents it spawned."""

    def __init__(self, apply: bool, ops: FileOps) -> None:
        self.apply = apply
        self.ops = ops
        self.acted = False
        """True once this recovery journaled a decision (in any journal of the run): only then is
        there a new brief to record; applying again to a settled run changes nothing."""

    def run(
        self, jpath: Path, workspace: Path | None, rebase: tuple[Path, Path] | None, *, top: bool
    ) -> RecoveryPlan:
        run_dir = jpath.parent
        plan = RecoveryPlan(journal=jpath, applied=self.apply)
        holder = _lock_holder(run_dir)
        if holder is not None:
            if top and self.apply:
                raise RecoveryError(
                    f"the run is live (pid {holder} holds its lock); stop it first", path=run_dir / LOCK_NAME
                )
            plan.live = True
            plan.notes.append(f"{jpath}: the run is live (pid {holder} holds its lock); not recovered.")
            plan.brief = make_brief(plan)
        else:
            with self._locked(run_dir):
                win = self._read(plan, jpath, workspace, rebase)
                self._decide_and_act(plan, win)
                self._children(plan, win)
                if top and self.acted:
                    plan.next_lsn += 1  # the brief's own record comes first; the agent continues after it
                    plan.brief = make_brief(plan)
                    plan.next_lsn = self._record_brief(jpath, plan.brief)
                else:
                    plan.brief = make_brief(plan)
        return plan

    def _record_brief(self, jpath: Path, brief: str) -> int:
        """Journal the resume brief the agent continues from (``recovery.brief``), so a viewer or a
        report shows the brief that was used, not one computed again later; returns the next lsn."""
        with self._writer(read_window(jpath)) as writer:
            writer.append("recovery.brief", brief=brief)  # durable when the writer closes
            return writer.next_lsn

    @contextmanager
    def _locked(self, run_dir: Path) -> Iterator[None]:
        """Hold the run's lock while applying, unless this very process (an agent resuming) holds it."""
        if not self.apply or lock_is_held(run_dir):
            yield
            return
        with RunLock(run_dir):
            yield

    def _read(
        self, plan: RecoveryPlan, jpath: Path, workspace: Path | None, rebase: tuple[Path, Path] | None
    ) -> Window:
        """Read the window, fill the plan's facts; with apply, cut a torn tail and record lost cuts."""
        win = read_window(jpath)
        header = win.header
        plan.run = str(header.get("run") or header.get("task_id") or "")
        plan.agent = str(header.get("agent") or "main")
        plan.task = str(header.get("task") or header.get("title") or header.get("task_id") or "")
        plan.dialect = win.dialect
        plan.read_from = win.start_lsn
        plan.committed_through = win.committed_through
        plan.next_lsn = win.next_lsn
        ws = plan.workspace = _workspace(header.get("workspace"), workspace, rebase)
        if any(p.kind == "intent" and p.effect in ("fs", "command") for p in win.pending):
            if ws is None:
                raise RecoveryError("the journal names no workspace; pass --workspace DIR", path=jpath)
            if not ws.is_dir():
                named = "given" if workspace is not None else "named by the journal's header"
                raise RecoveryError(
                    f"workspace {ws} ({named}) is not a directory; pass --workspace DIR", path=jpath
                )
        if self.apply and win.scan.torn:
            rep = repair(jpath, ops=self.ops)
            copy = rep.broken_copy.name if rep.broken_copy else "?"
            plan.notes.append(
                f"A torn tail of {rep.truncated_bytes} bytes was cut after lsn {rep.last_good_lsn} "
                f"(copy kept as {copy})."
            )
            win = read_window(jpath)
        elif win.scan.torn:
            size = win.scan.file_size - win.scan.valid_end
            plan.notes.append(f"A torn tail of {size} bytes follows lsn {win.last_lsn}.")
        for cut in win.unrecorded:
            plan.notes.append(
                f"A repair killed before its record had cut {len(cut.dropped)} bytes after lsn "
                f"{cut.last_good_lsn} (copy kept as {cut.copy})" + ("; recorded now." if self.apply else ".")
            )
        if self.apply and win.unrecorded:
            with self._writer(win) as writer:
                appender = Appender(writer, win.dialect)
                for cut in win.unrecorded:
                    appender.record_cut(cut)
            win = read_window(jpath)
        return win

    def _decide_and_act(self, plan: RecoveryPlan, win: Window) -> None:
        ws = plan.workspace
        images = _images(win, ws) if ws is not None else None
        steps = [observe(p, ws, images, plan.agent) for p in win.pending]
        plan.findings = [s.finding for s in steps]
        if self.apply and steps:
            with self._writer(win) as writer:
                start = writer.next_lsn
                actor = Actor(Appender(writer, win.dialect), ws, win.decisions, ops=self.ops)
                for s in steps:
                    actor.run(s)
                plan.next_lsn = writer.next_lsn
                self.acted = self.acted or writer.next_lsn != start
        elif self.apply:
            plan.next_lsn = win.next_lsn

    def _children(self, plan: RecoveryPlan, win: Window) -> None:
        """Recover each subagent journal named by an ``agent.spawn`` of the window."""
        header_ws = win.header.get("workspace")
        ws = plan.workspace
        rebase = (Path(header_ws), ws) if isinstance(header_ws, str) and ws is not None else None
        for sp in win.spawns:
            child = _child_journal(win.path.parent, sp.child_dir)
            if child is None or not child.is_file():
                if not sp.ended:
                    plan.notes.append(f"Agent {sp.child_agent} (spawned at lsn {sp.lsn}) has no journal yet.")
                continue
            if child.stat().st_size == 0:
                plan.notes.append(f"Agent {sp.child_agent} (spawned at lsn {sp.lsn}) died before its header.")
                continue
            sub = self.run(child, None, rebase, top=False)
            if sub.agent == "main" and sp.child_agent:
                sub.agent = sp.child_agent
            for f in sub.findings:
                f.agent = sub.agent
            plan.children.append(sub)

    @contextmanager
    def _writer(self, win: Window) -> Iterator[JournalWriter]:
        """A writer appending after the window's verified end (no second full scan)."""
        w = JournalWriter.continue_after(win.path, win.scan, header=win.header, ops=self.ops)
        with w:
            yield w


def _images(win: Window, ws: Path) -> Images:
    """Where images come from: the blob store, the last checkpoint's tree, the base the run started
    from (v1's header ``base_ref``, a seed plan's ``base``)."""
    refs = [
        ("checkpoint", win.checkpoint.get("git") if win.checkpoint is not None else None),
        ("base_ref", win.header.get("base_ref")),
        ("base", win.base),
    ]
    return Images(BlobStore(win.path.parent / "blobs"), ws, [(label, v) for label, v in refs if v])


def _child_journal(run_dir: Path, child_dir: str) -> Path | None:
    """A spawn's ``child_dir`` as a journal path, or None if it would leave the parent's run dir."""
    base = run_dir.resolve()
    p = (base / child_dir).resolve()
    if base not in p.parents:
        return None
    return p / JOURNAL_NAME
