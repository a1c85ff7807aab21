"""The Recovery tab tells the crash story: where the run stopped, what recovery found and decided
about each unfinished intent, the resume brief the agent continued from, and how each agent ended.

For a crashed run that was never resumed it shows what ``walkback recover`` would do now (the
analysis is read-only), or says in plain words what the analysis needs when it cannot run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from nicegui import ui
from walkback.journal.recovery import Finding, RecoveryPlan
from walkback.timeline.details import Recovery
from walkback.timeline.kinds import KIND_INDEX, PLACEHOLDER
from walkback.timeline.query import columns
from walkback.timeline.session import Session
from walkback.timeline.story import AgentStory, Crash, lsn_is_shared, where

from ..entry import Analysis
from .common import pre
from .step_detail import step_button

TABLE_PROPS = "dense flat wrap-cells"
SAID = {
    "applied": "was applied (its target already held the post)",
    "not_applied": "was not applied",
    "torn": "was torn (its target held neither pre nor post)",
    "in_doubt": "is in doubt (nothing shows whether it ran)",
    "unanswered_approval": "was an approval nobody answered",
    "never_started": "never started",
}
DID = {
    "commit": "recorded it as done",
    "redo": "ran it again",
    "restore_redo": "restored the pre image, then ran it again",
    "reissue": "reissued it with the same idempotency key",
    "ask_human": "left it to a person",
    "ask_again": "asks the person again",
    "none": "did nothing",
}


def _cols(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "label": n, "field": n, "align": "left"} for n in names]


def _on_row(table: ui.table, field: str, on_pick: Callable[[int], None]) -> None:
    def handler(e: Any) -> None:
        row = e.args[1] if isinstance(e.args, list) and len(e.args) > 1 else None
        value = row.get(field) if isinstance(row, dict) else None
        if isinstance(value, int) and value >= 1:
            on_pick(value - 1)

    table.on("rowClick", handler, args=[[], [field], None])


def decision_rows(session: Session) -> list[dict[str, Any]]:
    """The journal's recovery decisions, each with the intent it decided about and what followed."""
    c = columns(session)
    shared = lsn_is_shared(session)
    rows: list[dict[str, Any]] = []
    recs = np.flatnonzero((c.kind == KIND_INDEX["recovery"]) & (c.flags & PLACEHOLDER == 0))
    for i in map(int, recs[:2000]):
        d = session.detail(i)
        if not isinstance(d, Recovery) or not d.finding:
            continue
        ev = session.event(i)
        intent = ev.ref if ev.ref is not None else None
        after = session.completion_of(intent) if intent is not None else None
        rows.append(
            {
                "step": i + 1,
                "intent": intent + 1 if intent is not None else "",
                "where": where(session, intent, shared=shared) if intent is not None else "",
                "what": " ".join(p for p in (d.tool or ev.tool, d.target or ev.target) if p),
                "finding": SAID.get(d.finding, d.finding),
                "decision": DID.get(d.action, d.action),
                "then": f"step {after + 1}: {session.event(after).status}" if after is not None else "",
                "why": d.detail,
            }
        )
    return rows


def plan_rows(findings: list[Finding]) -> list[dict[str, Any]]:
    return [
        {
            "agent:lsn": f"{f.agent}:{f.lsn}",
            "what": " ".join(p for p in (f.tool, f.target) if p),
            "finding": SAID.get(f.finding, f.finding),
            "decision": DID.get(f.action, f.action),
            "why": f.detail,
        }
        for f in findings
    ]


def missing_workspace(session: Session, analysis: Analysis) -> str:
    """The analysis error in plain words when it is about the workspace (else the error itself)."""
    named = str(session.header.get("workspace") or "")
    if "workspace" not in analysis.error:
        return analysis.error
    if named and not Path(named).is_dir():
        return (
            "Recovery compares each unfinished intent with the files of the run's workspace. This run "
            f"names its workspace as {named}, which is not a folder on this machine (it may have been a "
            "scratch folder where the run was made). To see what recovery would do, open the viewer "
            "with --workspace DIR on a copy of that working tree as the crash left it."
        )
    return (
        "Recovery compares each unfinished intent with the files of the run's workspace, and this run "
        "names none that can be read here: open the viewer with --workspace DIR."
    )


def recovery_panel(
    session: Session,
    crashes: list[Crash],
    stories: list[AgentStory],
    analysis: Analysis | None,
    analyzer: bool,
    on_pick: Callable[[int], None],
) -> None:
    """The crash story (see the module docstring)."""
    if not crashes and not decision_rows(session) and not session.brief:
        ui.label("no crash and no recovery in this session").classes("text-grey-7")
        return
    for cr in crashes:
        with ui.row().classes("items-center gap-2 wb-crash-note").mark("crash-story"):
            ui.icon("bolt", color="negative")
            ui.label(cr.text(session)).classes("wb-break")
            for i in cr.running[:3]:
                step_button(f"step {i + 1}", i, on_pick)
            if cr.resumed is not None:
                step_button(f"resumed at step {cr.resumed + 1}", cr.resumed, on_pick)
    rows = decision_rows(session)
    if rows:
        ui.label("what recovery found and decided").classes("text-subtitle2")
        table = ui.table(columns=_cols(*rows[0]), rows=rows, row_key="step").props(TABLE_PROPS)
        table.classes("w-full wb-table").mark("recovery-records")
        _on_row(table, "step", on_pick)
    if session.status == "crashed":
        _analysis(session, analysis, analyzer)
    brief = session.brief or _recorded_brief(session)
    if brief:
        ui.label("the resume brief the agent continued from").classes("text-subtitle2")
        pre(brief).classes("wb-brief").mark("brief")
    elif analysis is not None and analysis.plan is not None and analysis.plan.brief:
        ui.label("resume brief (computed now by the analysis; none is recorded)").classes("text-subtitle2")
        pre(analysis.plan.brief).classes("wb-brief").mark("brief")
    told = [s for s in stories if len(s.moments) > 1 or s.outcome not in ("completed", "")]
    if told:
        ui.label("how each agent fared").classes("text-subtitle2")
        for s in told:
            with ui.row().classes("items-center gap-1"):
                ui.label(s.agent).classes("font-bold")
                ui.label(s.line).classes("text-sm").mark("agent-line")


def _recorded_brief(session: Session) -> str:
    """The last brief a recovery record carries (older journals put it on the decision)."""
    c = columns(session)
    recs = np.flatnonzero((c.kind == KIND_INDEX["recovery"]) & (c.flags & PLACEHOLDER == 0))
    for i in map(int, recs[::-1][:200]):
        d = session.detail(i)
        if isinstance(d, Recovery) and d.brief:
            return d.brief
    return ""


def _analysis(session: Session, analysis: Analysis | None, analyzer: bool) -> None:
    ui.label("crashed run: what recovery would do now").classes("text-subtitle2")
    if analysis is None:
        ui.label(
            "the recovery analysis is running …"
            if analyzer
            else "the recovery analysis is not available in this installation"
        ).classes("text-grey-7")
        return
    if analysis.error or analysis.plan is None:
        ui.label(missing_workspace(session, analysis)).classes("text-warning wb-break").mark("analysis-error")
        return
    plan: RecoveryPlan = analysis.plan
    facts = [f"committed through lsn {plan.committed_through}", f"the agent continues at lsn {plan.next_lsn}"]
    ui.label(" · ".join(facts)).classes("text-sm")
    findings = plan.all_findings()
    if findings:
        ui.table(columns=_cols(*plan_rows(findings)[0]), rows=plan_rows(findings), row_key="agent:lsn").props(
            TABLE_PROPS
        ).classes("w-full wb-table").mark("findings")
    else:
        ui.label("nothing is unfinished: recovery has nothing to decide").classes("text-grey-7")
