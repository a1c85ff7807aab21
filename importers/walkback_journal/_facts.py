"""Session facts from a journal: header and task, end status, integrity, spawns, recovery records."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from walkback.journal.runlock import lock_is_held
from walkback.journal.scanresult import ScanResult
from walkback.journal.writer import JOURNAL_NAME
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.kinds import STATUSES
from walkback.timeline.session import RecoveryFinding, Session

from ..fields import string
from ._vocab import NAME

if TYPE_CHECKING:
    from ._reading import Refs, RemappedRefs


def head(session: Session, res: ScanResult) -> None:
    """Header, format and task: known from the first record on."""
    session.header = res.header or {}
    session.format = NAME if res.dialect == "v1" else f"{NAME}-seed-{res.dialect}"
    session.task = str(session.header.get("task") or session.header.get("task_id") or "")


def finish_main(
    session: Session, jpath: Path, res: ScanResult, ended: str, *, archived_segment: bool = False
) -> None:
    """Session-level facts that come from the top-level journal (all its segments together)."""
    if not archived_segment:
        head(session, res)
    integ = session.integrity
    bad = res.corrupt + res.torn if archived_segment else res.corrupt
    if bad or integ.chain != "broken":
        integ.chain = "broken" if bad else res.chain
    if integ.first_bad_lsn is None:
        integ.first_bad_lsn = bad[0].lsn if bad else None
    if not archived_segment:
        integ.torn_tail = res.torn_tail
        if integ.first_bad_lsn is None:
            integ.first_bad_lsn = res.first_bad_lsn
    integ.corrupt += [{"lsn": d.lsn, "line": d.line, "reason": d.reason, "file": str(jpath)} for d in bad]
    if ended:
        session.status = ended if ended in STATUSES else "unknown"
    elif lock_is_held(jpath.parent):
        session.status = "running"
    elif res.dialect == "v1" and _source_status(session):
        session.status = _source_status(session)  # imported: as its source ended (§11)
    elif res.dialect == "v1" or session.pending():
        session.status = "crashed"  # a v1 writer always ends with run.end; a seed run left an intent open
    else:
        session.status = "unknown"


def _source_status(session: Session) -> str:
    """How an imported journal's source ended (its header's ``source.status``), or "" when that is
    not a status; a source still running when it was imported is a copy that no one writes on."""
    source = session.header.get("source")
    status = string(source.get("status")) if isinstance(source, dict) else ""
    return "unknown" if status == "running" else status if status in STATUSES else ""


def notable(
    session: Session,
    jpath: Path,
    typ: str,
    d: dict[str, Any],
    i: int,
    status: str,
    children: list[tuple[Path, int]],
    outcomes: dict[str, str],
) -> str:
    """Session facts from spawns, ends and recovery records; returns a run's end status if any."""
    if typ == "agent.spawn":
        child = child_journal(jpath, d["child_dir"]) if isinstance(d.get("child_dir"), str) else None
        if child is not None:
            children.append((child, i))
    elif typ == "agent.end":
        if isinstance(d.get("child_agent"), str):
            outcomes[d["child_agent"]] = status
    elif typ in ("run.end", "cancel"):
        return str(d.get("status") or ("cancelled" if typ == "cancel" else "completed"))
    else:
        session.recovered = True
        if typ == "recovery":
            _finding(session, d)
        elif typ == "recovery.brief" and isinstance(d.get("brief"), str):
            session.brief = d["brief"]  # the brief the resumed agent was given (the last one)
    return ""


def roster(b: SessionBuilder, header: dict[str, Any], refs: Refs | RemappedRefs) -> None:
    """The agents a journal of several agents lists in its header (an import, §11), each spawned by
    the record its ``spawned_by`` lsn names. A parent must be listed before its child (a cycle or
    an unknown parent leaves the agent at the top), so the agents always form a tree."""
    listed = header.get("agents")
    for entry in listed if isinstance(listed, list) else []:
        name = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            continue
        parent = entry.get("parent")
        known = name in b.session.agents
        spawn = refs.get(entry.get("spawned_by"))
        a = b.agent(
            name,
            parent=parent if not known and isinstance(parent, str) and parent in b.session.agents else None,
            spawned_by=spawn if spawn >= 0 else None,
            run=string(entry.get("run")),
        )
        a.task, a.label = (
            string(entry.get("task")),
            string(entry.get("label")),
        )  # the source's, not the header's
        a.outcome = a.outcome or string(entry.get("outcome"))


def _finding(session: Session, d: dict[str, Any]) -> None:
    ref = d.get("ref")
    session.recovery_findings.append(
        RecoveryFinding(
            lsn=ref if isinstance(ref, int) else -1,
            target=str(d.get("target") or ""),
            tool=str(d.get("tool") or ""),
            finding=str(d.get("finding") or ""),
            action=str(d.get("action") or ""),
            detail=str(d.get("detail") or ""),
        )
    )


def child_journal(parent_journal: Path, child_dir: str) -> Path | None:
    """The journal a spawn's ``child_dir`` names, or None if it escapes the parent's run dir."""
    if "\x00" in child_dir:
        return None
    base = parent_journal.parent.resolve()
    p = (base / child_dir).resolve()
    if base not in p.parents:
        return None  # never followed; the spawn itself stays visible
    return p / JOURNAL_NAME
