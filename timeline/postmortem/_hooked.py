"""Exact recovery of a hooked session: walkback's own recovery, run on the session's hook journal.

A hooked agent wrote an intent (pre hash and image, expected post hash and image; for a command, a
snapshot of the working tree) durably before each tool call, so its crash is recovered as a walkback
run's is (``journal.recovery``), not guessed from the transcript: a file intent is applied (hash ==
post: committed), not applied (hash == pre: redone from the post image) or torn (neither: restored
from the pre image, then redone), each decision journaled and fsynced in the hook journal before it
is acted on; a command is in doubt and its finding lists the files changed since its snapshot. Every
finding names the agent's call id (the intent's ``call``).

What the hook journal left open but the transcript closed is settled from the transcript first: a
call whose hook saw no end (another hook blocked it, the user refused it, the post hook was lost)
while the transcript has its result. A file call refused or failed is not redone (``not_applied``,
``none``: closed with a ``fail``); a command with a result ran (``applied``, ``commit``: closed with
the transcript's result). A file call the transcript says succeeded is left to the hashes. With
``--apply`` each such decision is journaled (fsynced) and the intent closed before the journal's
own recovery runs, which then no longer sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from walkback.journal.errors import RecoveryError
from walkback.journal.recovery import Finding, RecoveryPlan, recover
from walkback.journal.recovery._brief import make_brief
from walkback.journal.runlock import RunLock, lock_is_held
from walkback.journal.writer import JournalWriter

from ..details import ToolCall, ToolResult
from ..session import Session

REFUSED = frozenset({"failed", "denied"})
"""Statuses of a transcript's result that say a file tool did not take effect."""


@dataclass
class HookedRecovery:
    """The recovery plan of a hooked session's journal, named after the session it belongs to."""

    source: str
    """The session as given (the agent's transcript)."""
    format: str
    journal: Path
    """The hook journal the findings and decisions are in."""
    plan: RecoveryPlan

    @property
    def brief(self) -> str:
        return self.plan.brief

    @property
    def needs_human(self) -> bool:
        return self.plan.needs_human

    def all_findings(self) -> list[Finding]:
        return self.plan.all_findings()

    def to_json(self) -> dict[str, Any]:
        """``{format, session, journal}`` and the journal recovery's shape (findings name their ``call``)."""
        head = {"format": self.format, "session": self.source, "journal": str(self.journal)}
        return {**head, **self.plan.to_json()}


def recover_hooked(session: Session, *, source: str, workspace: Path | None, apply: bool) -> HookedRecovery:
    """Recover ``session`` (merged with its hook journal) against ``workspace`` (default: the
    journal's recorded one); with ``apply``, act as ``walkback recover --apply`` does on a run.

    Raises:
        ValueError: the session has no hook journal.
    """
    if session.hooked is None:
        raise ValueError("the session has no hook journal")
    journal = Path(session.hooked.journal)
    settled = settled_by_transcript(session)
    if apply and settled:
        _close(journal, settled)
    plan = recover(journal.parent, workspace=workspace, apply=apply)
    if settled:
        lsns = {s.finding.lsn for s in settled}
        rest = [f for f in plan.findings if f.lsn not in lsns]
        plan.findings = sorted([*(s.finding for s in settled), *rest], key=lambda f: f.lsn)
        plan.brief = make_brief(plan)
    return HookedRecovery(source=source, format=session.format, journal=journal, plan=plan)


@dataclass
class Settled:
    """An intent the hook journal left open whose call the transcript closed, and how to close it."""

    finding: Finding
    close: str
    """``commit`` or ``fail``."""
    fields: dict[str, Any]


def settled_by_transcript(session: Session) -> list[Settled]:
    """The open intents of a hooked session whose calls have a result in the transcript (see the
    module docstring), in journal order."""
    hooked = session.hooked
    open_ = [
        (call, x)
        for call, c in hooked.calls.items()
        for x in c.intents
        if not any(e.get("ref") == x.get("lsn") for e in c.ends)
    ]
    if not open_:
        return []
    index: dict[str, int] = {}
    for i in session.indices_where(kind="tool_call"):
        d = session.detail(i)
        if session.table.src[i] != hooked.src and isinstance(d, ToolCall) and d.call_id:
            index.setdefault(d.call_id, i)
    out = []
    for call, x in open_:
        at = index.get(call)
        j = session.completion_of(at) if at is not None else None
        if at is None or j is None or session.table.src[j] == hooked.src:
            continue
        result = session.detail(j)
        if not isinstance(result, ToolResult):
            continue
        status = session.event(at).status
        said = (result.error or result.output).strip().replace("\n", " ")[:300]
        f = Finding(int(x["lsn"]), str(x.get("target", "")), str(x.get("tool", "")), "", "", "", call=call)
        if x.get("effect") == "command":
            f.finding, f.action = "applied", "commit"
            f.detail = f"the transcript records the command's result ({status}): it ran; {said}"
            tail = {"exit_code": result.exit_code, "output_tail": result.output[-2000:]}
            out.append(Settled(f, "commit", {"result": tail, "recovered": True}))
        elif status in REFUSED:
            f.finding, f.action = "not_applied", "none"
            f.detail = f"the transcript records the call as {status}: it took no effect; not redone ({said})"
            out.append(Settled(f, "fail", {"error": f.detail}))
    return out


def _close(journal: Path, settled: list[Settled]) -> None:
    """Journal each decision (fsynced), then close its intent, under the run's lock."""
    if lock_is_held(journal.parent):
        raise RecoveryError(
            "the session is live (a hook holds its journal's lock); stop it first", path=journal
        )
    with RunLock(journal.parent), JournalWriter.open(journal) as w:
        for s in settled:
            f = s.finding
            w.append("recovery", ref=f.lsn, target=f.target, tool=f.tool, finding=f.finding, action=f.action,
                     detail=f.detail, sync=True)  # fmt: skip
            lsn = w.append(s.close, ref=f.lsn, call=f.call, sync=True, **s.fields)
            f.done, f.outcome = True, f"closed from the transcript ({s.close} lsn {lsn})"
