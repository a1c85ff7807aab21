"""What recovery found and decided: findings and the plan that holds them (plain dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FINDINGS: tuple[str, ...] = (
    "applied",
    "not_applied",
    "torn",
    "in_doubt",
    "unanswered_approval",
    "never_started",
)
"""The only finding words (docs/journal-format.md, record ``recovery``)."""
ACTIONS: tuple[str, ...] = ("commit", "redo", "restore_redo", "reissue", "ask_human", "ask_again", "none")
"""The only action words."""
HUMAN_ACTIONS = frozenset({"ask_human", "ask_again"})
"""Actions recovery never takes itself: a person decides."""


@dataclass
class Finding:
    """One unfinished intent (or unanswered approval, or lost intent) and the decision about it."""

    lsn: int
    """lsn of the intent or approval request (the seq in the seq dialect; the claimed lsn of a lost one)."""
    target: str
    tool: str
    finding: str
    """One of :data:`FINDINGS`."""
    action: str
    """One of :data:`ACTIONS`."""
    detail: str
    """Why, in facts (hashes, where an image came from)."""
    agent: str = "main"
    """Agent id of the journal the finding is in."""
    step: int | None = None
    """Planner step the intent executes, when the journal says."""
    outcome: str = ""
    """What ``apply`` did about it (empty for a plain analysis)."""
    done: bool = False
    """True once the intent is closed by a commit or fail record (by this or an earlier run)."""
    call: str = ""
    """The agent's own id of the call the intent records (a hook journal's ``call``), if any."""

    def to_json(self, *, prefix: str = "") -> dict[str, Any]:
        """The stable ``--json`` shape: exactly lsn, target, tool, finding, action, detail, and
        ``call`` for an intent that names the agent's call (a hook journal's)."""
        out: dict[str, Any] = {
            "lsn": self.lsn,
            "target": self.target,
            "tool": self.tool,
            "finding": self.finding,
            "action": self.action,
            "detail": prefix + self.detail,
        }
        if self.call:
            out["call"] = self.call
        return out


@dataclass
class RecoveryPlan:
    """The findings of one journal, its subagents' plans, and the resume brief built from facts."""

    journal: Path
    run: str = ""
    agent: str = "main"
    task: str = ""
    dialect: str = "v1"
    workspace: Path | None = None
    findings: list[Finding] = field(default_factory=list)
    committed_through: int = -1
    """Every intent and approval request at or below this lsn was settled when recovery began."""
    next_lsn: int = 0
    """The lsn (seq) the next record of this journal gets: where the agent continues."""
    brief: str = ""
    """Facts: task, committed through, each finding and what was done, what to do next."""
    children: list[RecoveryPlan] = field(default_factory=list)
    """Plans of the subagent journals named by ``agent.spawn`` records."""
    notes: list[str] = field(default_factory=list)
    """Other facts for the brief (a cut torn tail, a child without a journal, a live run)."""
    applied: bool = False
    live: bool = False
    """True when another process holds the run's lock: a live run is not recovered."""
    read_from: int | None = None
    """lsn of the checkpoint the read started at (None: the whole journal was read)."""

    @property
    def needs_human(self) -> bool:
        """Something is left that only a human can settle (``walkback recover`` exits 3): an effect
        in doubt, an approval to ask again, or, after ``apply``, a reissue that did not go through."""
        return any(
            not f.done and (f.action in HUMAN_ACTIONS or (self.applied and f.action == "reissue"))
            for f in self.all_findings()
        )

    def all_findings(self) -> list[Finding]:
        """This journal's findings, then each subagent's (depth first)."""
        out = list(self.findings)
        for c in self.children:
            out += c.all_findings()
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"findings": [...], "committed_through", "next_lsn", "brief"}`` exactly.

        Subagent findings are in the same list; their ``detail`` starts with ``agent <id>: ``.
        """
        findings = [f.to_json() for f in self.findings]
        for c in self.children:
            findings += [f.to_json(prefix=f"agent {f.agent}: ") for f in c.all_findings()]
        return {
            "findings": findings,
            "committed_through": self.committed_through,
            "next_lsn": self.next_lsn,
            "brief": self.brief,
        }
