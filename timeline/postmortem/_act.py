"""Acting on a postmortem: journal each decision, redo what is safe to redo, verify it.

The decisions go to a walkback journal of their own beside the session (``<session>.walkback/``),
never into the agent's file, written ahead as walkback's own recovery writes them: for each call an
``intent`` mirroring it (tool, arguments, target, the hashes before and after, the images for a
redo), the ``recovery`` record with the finding and the action (fsynced before anything is done),
then a ``commit`` when the effect is in place and verified, or a ``fail``. Only what is idempotent
is done: an Edit, Write or patch that was not applied is written again from the recorded text,
atomically, inside the workspace, after a fresh hash check shows the file is still as it was
classified. A crash half-way leaves an intent with its decision and no commit: the journal's own
``walkback recover`` then sees where it stopped, and a new postmortem finds the file redone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from walkback.journal.errors import OutsideWorkspace
from walkback.journal.fileops import OS, atomic_write, confined
from walkback.journal.images import image_fields
from walkback.journal.paths import JOURNAL_NAME
from walkback.journal.reader import Scanner
from walkback.journal.record import sha256_bytes, sha256_file
from walkback.journal.runlock import RunLock
from walkback.journal.writer import JournalWriter

from ._brief import make_brief

if TYPE_CHECKING:
    from . import CallFinding, Postmortem

SUFFIX = ".walkback"


def beside(session: Path) -> Path:
    """The folder of the journal of a session's postmortem: ``<session>.walkback`` next to it."""
    return session.with_name(session.name + SUFFIX)


def _settled(journal: Path) -> dict[int, int]:
    """Steps an earlier postmortem settled (an intent with its commit), with the commit's lsn."""
    steps: dict[int, int] = {}
    done: dict[int, int] = {}
    for rec in Scanner(journal):
        d = rec.data
        if d.get("type") == "intent" and isinstance(d.get("source_step"), int):
            steps[rec.lsn] = d["source_step"]
        elif d.get("type") == "commit" and rec.closes in steps:
            done[steps[rec.closes]] = rec.lsn
    return done


def apply(pm: Postmortem, folder: Path) -> Postmortem:
    """Journal every decision of ``pm`` in ``folder`` and act on the idempotent ones; ``pm`` is
    updated (outcomes, ``done``, the brief) and returned."""
    OS.mkdir(folder)
    journal = folder / JOURNAL_NAME
    with RunLock(folder):
        before = _settled(journal) if journal.is_file() and journal.stat().st_size else {}
        if journal.is_file() and journal.stat().st_size:
            writer = JournalWriter.open(journal)
        else:
            writer = JournalWriter.create(
                folder,
                task=f"postmortem of {pm.format} session {pm.source}: {pm.task}"[:2000],
                workspace=str(pm.workspace.resolve()),
                source={"format": pm.format, "path": pm.source},
            )
        with writer:
            for f in pm.findings:
                if f.step in before:
                    f.done = True
                    f.outcome = f"settled by an earlier postmortem (journal lsn {before[f.step]})"
                    continue
                _decide(writer, pm.workspace, f)
    pm.journal, pm.applied = journal, True
    pm.brief = make_brief(pm)
    return pm


def _decide(w: JournalWriter, workspace: Path, f: CallFinding) -> None:
    v = f.verdict
    fields: dict[str, Any] = {
        "tool": f.tool,
        "args": f.arguments,
        "target": f.target,
        "effect": v.effect,
        "source_step": f.step,
        "source_call": f.call,
    }
    if v.effect == "fs":
        post = sha256_bytes(v.redo) if v.redo is not None and f.action == "redo" else None
        fields.update(
            pre=v.seen if f.action != "commit" else None, post=v.seen if f.action == "commit" else post
        )
        if f.action == "redo" and v.redo is not None:
            fields.update(image_fields(v.before, v.redo, w.blobs))
    intent = w.append("intent", **fields)
    w.append("recovery", ref=intent, target=f.target, tool=f.tool, finding=f.finding, action=f.action,
             detail=f.detail)  # fmt: skip
    if f.action == "commit":
        w.append("commit", ref=intent, post=v.seen, verified={"post": True, "check": None, "result": None},
                 recovered=True)  # fmt: skip
        f.done, f.outcome = True, "recorded as done; the file holds its effect"
    elif f.action == "redo" and v.redo is not None and v.path is not None:
        try:
            f.done, f.outcome = _redo(w, workspace, intent, v.path, v.seen, v.redo)
        except _WriteFailed as e:
            f.write_error, f.outcome = str(e), f"not redone: {e}; run recover --apply again once it can be"
            return
        if not f.done:
            f.action = "ask_human"


class _WriteFailed(Exception):
    """A redo's write failed (the message names the file): the call stays a redo for the next run."""


def _redo(
    w: JournalWriter, workspace: Path, intent: int, path: Path, seen: str | None, data: bytes
) -> tuple[bool, str]:
    """Write ``data`` over ``path`` if it still hashes to ``seen``: ``(verified, what happened)``."""
    try:
        now = sha256_file(path)
        if now != seen:
            w.append("fail", ref=intent, error=f"the file changed since it was classified ({now})")
            return False, "not redone: the file changed since it was classified"
        OS.mkdir(confined(workspace, path).parent)  # a Write into a folder it was to create
        atomic_write(path, data, root=workspace)
    except OutsideWorkspace as e:
        w.append("fail", ref=intent, error=str(e))
        return False, f"not redone: {e}"
    except OSError as e:  # the disk refused: journaled, and the next calls still get their decision
        error = f"{e.filename or path}: cannot write: {e.strerror or e}"
        w.append("fail", ref=intent, error=error)
        raise _WriteFailed(error) from None
    post = sha256_file(path)
    verified = {"post": post == sha256_bytes(data), "check": None, "result": None}
    if not verified["post"]:
        w.append("fail", ref=intent, error="the file does not hash to what was written", verified=verified)
        return False, "written, but the file does not hash to what was written"
    w.append("commit", ref=intent, post=post, verified=verified, recovered=True)
    return True, f"redone from the recorded text; the new hash {post[:19]}… verified"
