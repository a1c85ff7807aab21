"""Approvals in the loop: gate an action on a journaled decision; settle what a crash left open.

A request is journaled before anyone is asked, and a decision only when someone answered: after a
crash an unanswered request is asked again (never inferred), and an effect recovery could not
classify becomes a question to a human instead of a blind retry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from walkback.journal import failpoints
from walkback.journal.errors import AgentError

from .actions import Action
from .approvals import ApprovalPending, ApprovalRequest, Decision, Rule, standing_answer
from .tools import Prepared

if TYPE_CHECKING:
    from .harness import Harness


def gate(h: Harness, step: int, action: Action, rule: Rule) -> tuple[int, Decision]:
    """The journaled request for this step (reused on resume) and its journaled decision."""
    lsn = h.state.gate_request(step)
    if lsn is None:
        lsn = h.append(
            "approval.request",
            tool=action.tool,
            target=action.target,
            action={"tool": action.tool, "args": action.args},
            reason=rule.reason or f"policy ({rule.source}) requires approval for {rule.tool} {rule.target}",
            step=step,
        )
        failpoints.failpoint("approval.after_request")
    return lsn, decide(h, lsn, standing_answer(rule))


def decide(h: Harness, lsn: int, standing: Decision | None = None) -> Decision:
    """The decision journaled for request ``lsn``, asking for one if there is none yet."""
    rec = h.state.decisions.get(lsn)
    if rec is not None:
        return Decision(str(rec["decision"]), str(rec.get("approver", "")), str(rec.get("reason", "")))
    r = h.state.requests[lsn]
    req = ApprovalRequest(
        lsn, int(r["step"]), r["tool"], r["target"], r["action"], r["reason"], h.writer.agent
    )
    decision = standing or h.approver(req)
    if decision is None:
        h.emit(f"approval lsn {lsn} ({r['tool']} {r['target']}) is waiting for an answer")
        raise ApprovalPending(
            f"approval request lsn {lsn} ({r['tool']} {r['target']}) has no answer; resume the run to "
            "be asked again (or pass --approve-all/--deny-all/--policy)",
            path=h.writer.path,
        )
    h.append(
        "approval.decision",
        ref=lsn,
        decision=decision.decision,
        approver=decision.approver,
        reason=decision.reason,
    )
    h.emit(f"approval lsn {lsn}: {decision.decision} ({decision.approver})")
    return decision


def ask_unanswered(h: Harness) -> None:
    """Ask again every request a crash left without an answer; never infer one."""
    for lsn in h.state.unanswered():
        r = h.state.requests[lsn]
        rule = h.policy.rule_for(str(r["tool"]), str(r["target"])) if "ref" not in r else None
        h.emit(f"asking again: approval lsn {lsn} ({r['tool']} {r['target']}) was never answered")
        decide(h, lsn, standing_answer(rule) if rule else None)


def settle_open_intents(h: Harness) -> None:
    """What recovery left for a human: effects that may or may not have happened.

    A keyed external call approved for re-issue is sent again with its original key and
    committed in place; a command approved for a re-run is closed with ``fail`` (in_doubt) and
    its step runs again; a denied one is closed the same way and its step is skipped.
    """
    for lsn in h.state.open_intents():
        intent = h.state.intents[lsn]
        if intent.get("effect") == "fs":
            raise AgentError(
                f"lsn {lsn} ({intent.get('tool')} {intent.get('target')}) is still unfinished after "
                "recovery; run `walkback recover --apply` and resolve what it reports",
                path=h.writer.path,
            )
        req = next((q for q, r in h.state.requests.items() if r.get("ref") == lsn), None)
        if req is None:
            req = h.append(
                "approval.request",
                ref=lsn,
                tool=intent["tool"],
                target=intent["target"],
                action={"tool": intent["tool"], "args": intent["args"]},
                reason=f"in doubt after a crash: lsn {lsn} may or may not have taken effect; approve to "
                + (
                    "re-issue it with its idempotency key"
                    if intent.get("idempotency_key")
                    else "run it again"
                ),
                step=intent["step"],
            )
        decision = decide(h, req)
        action = Action(
            intent["tool"],
            intent["args"],
            check=intent.get("check"),
            idempotent=bool(intent.get("idempotent")),
        )
        if decision.decision == "approve" and intent.get("idempotency_key"):
            prep = Prepared(action, None, None, None, None, None)
            h.perform(lsn, prep, key=str(intent["idempotency_key"]), recovered=True)
            continue
        h.append(
            "fail",
            ref=lsn,
            error=f"in doubt after a crash; {decision.decision} by {decision.approver}",
            in_doubt=True,
            retry=decision.decision == "approve",
        )
