"""The resume brief of a postmortem: the session's facts and the workspace's, in sentences.

Example::

    Task: Rename getUserById to fetchUser (claude-code session ~/.claude/projects/p/3f2a.jsonl).
    Completed through tool call 11 of 13; tool call 12 is the first without a result.
    Tool call 12 (step 60) Edit of src/a.py was applied; its result was never recorded.
    Tool call 13 (step 61) Bash `npm test` is in doubt: nothing records whether it ran.
    Next: record the Edit of src/a.py as done; rerun `npm test` if that is safe; then continue the task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from walkback.journal.recovery._brief import clean

if TYPE_CHECKING:
    from . import CallFinding, Postmortem

SAID = {
    "applied": "was applied; its result was never recorded",
    "not_applied": "was not applied",
    "torn": "is torn",
    "in_doubt": "is in doubt",
}


def subject(f: CallFinding) -> str:
    """``Edit of src/a.py``, ``Bash `npm test```, ``WebFetch https://…``."""
    tool = clean(f.tool, 40)
    if f.command:
        return f"{tool} `{clean(f.command, 120)}`"
    if f.url:
        return f"{tool} {clean(f.url, 160)}"
    return f"{tool} of {clean(f.target)}" if f.target else tool


def _line(f: CallFinding) -> str:
    said = f"Tool call {f.call} (step {f.step}) {subject(f)} {SAID.get(f.finding, clean(f.finding))}"
    why = clean(f.outcome or f.detail, 240)
    return f"{said}: {why}." if f.finding != "applied" or f.outcome else f"{said} ({why})."


def _todo(f: CallFinding) -> str | None:
    if f.done:
        return None
    if f.action == "commit":
        return f"record the {subject(f)} as done"
    if f.action == "redo":
        return f"redo the {subject(f)} (walkback recover --apply)"
    if f.command:
        return f"rerun `{clean(f.command, 120)}` if that is safe"
    if f.url:
        return f"check whether {clean(f.url, 160)} was called"
    return f"look at {clean(f.target) or 'the ' + subject(f)} by hand"


def make_brief(pm: Postmortem) -> str:
    """Task, how far the session got, each unfinished call and what it left, what is next."""
    where = f"{clean(pm.format, 40)} session {clean(pm.source, 200)}".strip()
    lines = [f"Task: {clean(pm.task) or '(untitled)'} ({where})."]
    if not pm.findings and not pm.notes:
        lines.append(f"Every one of its {pm.calls} tool calls has its result: nothing to recover.")
        return "\n".join(lines)
    first = f"tool call {pm.completed_through + 1} is the first without a result"
    if pm.completed_through:
        lines.append(f"Completed through tool call {pm.completed_through} of {pm.calls}; {first}.")
    else:
        lines.append(f"Of its {pm.calls} tool calls, {first}.")
    lines += [clean(n, 300) for n in pm.notes]
    lines += [_line(f) for f in pm.findings]
    if pm.journal is not None:
        lines.append(f"The decisions are journaled in {clean(str(pm.journal), 240)}.")
    todo = [t for t in map(_todo, pm.findings) if t]
    then = "; ".join(todo) + "; then " if todo else ""
    lines.append(f"Next: {then}continue the task after tool call {pm.calls}.")
    return "\n".join(lines)
