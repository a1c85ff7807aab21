"""The resume brief: what the journal and the workspace say, in sentences. Never a model's words.

Example (after ``--apply``)::

    Task: Rename getUserById to fetchUser (run 3f2a9c41d0e2).
    Committed through lsn 23.
    lsn 24 (step 23) replace_symbol src/api/users.ts was torn: restored from the blob store, redone
    from the blob store; post hash verified; committed (lsn 26).
    Next: continue at lsn 27.
"""

from __future__ import annotations

import re

from ._plan import Finding, RecoveryPlan

FOUND = {
    "applied": "was applied but not committed",
    "not_applied": "was not applied",
    "torn": "was torn (its target is neither the pre nor the post image)",
    "in_doubt": "is in doubt",
    "unanswered_approval": "is an approval request without a decision",
    "never_started": "was lost in a torn tail and never started",
}
TODO = {
    "commit": "re-verify and commit {n}",
    "redo": "redo {n}",
    "restore_redo": "restore the pre image of {n} and redo it",
    "reissue": "reissue {n} with its idempotency key",
    "ask_human": "ask a human whether {n} took effect",
    "ask_again": "ask again for approval {n}",
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(text: str, limit: int = 160) -> str:
    """Journal text made safe for a terminal line: control characters replaced, length capped."""
    text = _CONTROL.sub("?", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _subject(f: Finding, unit: str) -> str:
    step = f" (step {f.step})" if f.step is not None else ""
    what = " ".join(x for x in (clean(f.tool, 40), clean(f.target)) if x)
    call = f" (call {clean(f.call, 80)})" if f.call else ""
    return f"{unit} {f.lsn}{step} {what}{call}".rstrip()


def _line(f: Finding, unit: str) -> str:
    said = f"{_subject(f, unit)} {FOUND.get(f.finding, clean(f.finding))}"
    if f.outcome:
        return f"{said}: {clean(f.outcome, 240)}."
    return f"{said} ({clean(f.detail, 240)})."


def _todo(f: Finding, unit: str) -> str | None:
    if f.done or f.action not in TODO:
        return None
    if f.outcome and f.action not in ("ask_human", "ask_again", "reissue"):
        return None
    return TODO[f.action].format(n=f"{unit} {f.lsn}")


def _body(plan: RecoveryPlan, prefix: str) -> tuple[list[str], list[str]]:
    unit = "seq" if plan.dialect == "seq" else "lsn"
    lines: list[str] = []
    todo: list[str] = []
    if plan.live:
        lines += [prefix + clean(n, 240) for n in plan.notes]
        return lines, todo
    lines.append(f"{prefix}Committed through {unit} {plan.committed_through}.")
    lines += [prefix + clean(n, 240) for n in plan.notes]
    for f in plan.findings:
        lines.append(prefix + _line(f, unit))
        t = _todo(f, unit)
        if t:
            todo.append(prefix + t if prefix else t)
    for c in plan.children:
        sub, subtodo = _body(c, f"agent {clean(c.agent, 40)}: ")
        lines += sub
        todo += subtodo
    return lines, todo


def make_brief(plan: RecoveryPlan) -> str:
    """Task, what is committed through which lsn, each finding and what was done, what is next."""
    unit = "seq" if plan.dialect == "seq" else "lsn"
    head = f"Task: {clean(plan.task) or '(untitled)'}" + (
        f" (run {clean(plan.run, 80)})." if plan.run else "."
    )
    lines, todo = _body(plan, "")
    if plan.live:
        return "\n".join([head, *lines])
    first = "; ".join(todo) + ", then " if todo else ""
    whose = f" of agent {clean(plan.agent, 40)}'s journal" if plan.children else ""
    lines.append(f"Next: {first}continue at {unit} {plan.next_lsn}{whose}.")
    return "\n".join([head, *lines])
