"""Approvals: which actions need a human's yes, and who answers.

A :class:`Policy` is a list of rules matched in order by tool and target (shell-style globs); the
first match decides whether the action needs approval. A rule may also carry a ``decision``: that
is a standing answer (a policy file used for unattended runs), journaled with the policy file as
the approver. Otherwise the :data:`Approver` callback answers; it returns ``None`` when nobody can
answer now, and the request stays unanswered in the journal (asked again on resume, never
inferred). The library never prompts: the CLI passes a callback that does.

Policy JSON: ``{"rules": [{"tool": "external_call", "target": "*", "approval": "required",
"decision": "approve", "reason": "..."}]}`` (``approval``: ``required`` or ``none``).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from walkback.journal.errors import AgentError

DECISIONS = ("approve", "deny")


class ApprovalPending(AgentError):
    """A request has no answer and nobody can give one now; the run stops, resumable (exit 3)."""

    exit_code = 3


@dataclass(frozen=True)
class Rule:
    tool: str = "*"
    target: str = "*"
    approval: str = "required"
    decision: str | None = None
    """A standing answer (``approve``/``deny``); None: ask the approver."""
    reason: str = ""
    source: str = "task"
    """Where the rule came from (``task`` or a policy file's name): the approver of a standing answer."""

    def matches(self, tool: str, target: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool) and fnmatch.fnmatchcase(target, self.target)


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...] = ()

    def rule_for(self, tool: str, target: str) -> Rule | None:
        """The first matching rule if it requires approval, else None."""
        for r in self.rules:
            if r.matches(tool, target):
                return r if r.approval == "required" else None
        return None

    def then(self, other: Policy) -> Policy:
        """This policy's rules first, then ``other``'s."""
        return Policy(self.rules + other.rules)

    def to_json(self) -> list[dict[str, Any]]:
        return [asdict(r) for r in self.rules]

    @classmethod
    def from_json(cls, data: Any, *, source: str, path: Path | None = None) -> Policy:
        rules = data.get("rules", []) if isinstance(data, dict) else data
        if not isinstance(rules, list):
            raise AgentError('a policy is {"rules": [...]}', path=path)
        out = []
        for i, r in enumerate(rules):
            if not isinstance(r, dict) or set(r) - {
                "tool",
                "target",
                "approval",
                "decision",
                "reason",
                "source",
            }:
                raise AgentError(f"rule {i}: keys are tool, target, approval, decision, reason", path=path)
            if r.get("approval", "required") not in ("required", "none"):
                raise AgentError(f"rule {i}: approval must be 'required' or 'none'", path=path)
            if r.get("decision") not in (None, *DECISIONS):
                raise AgentError(f"rule {i}: decision must be 'approve' or 'deny'", path=path)
            out.append(Rule(**{"source": source, **{k: str(v) for k, v in r.items() if v is not None}}))
        return cls(tuple(out))

    @classmethod
    def load(cls, path: Path) -> Policy:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise AgentError(f"policy file is not valid JSON: {e.msg}", path=path, line=e.lineno) from None
        except OSError as e:
            raise AgentError(f"cannot read policy file: {e.strerror}", path=path) from None
        return cls.from_json(data, source=f"policy:{Path(path).name}", path=path)


@dataclass(frozen=True)
class ApprovalRequest:
    """What the approver is asked (mirrors the ``approval.request`` record)."""

    lsn: int
    step: int
    tool: str
    target: str
    action: dict[str, Any]
    reason: str
    agent: str = "main"


@dataclass(frozen=True)
class Decision:
    decision: str
    approver: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.decision not in DECISIONS:
            raise AgentError(f"a decision is 'approve' or 'deny', not {self.decision!r}")


Approver = Callable[[ApprovalRequest], Decision | None]
"""Answers a request, or returns None when nobody can answer now."""


def approve_all(req: ApprovalRequest) -> Decision:
    return Decision("approve", "cli:--approve-all", "approved by --approve-all")


def deny_all(req: ApprovalRequest) -> Decision:
    return Decision("deny", "cli:--deny-all", "denied by --deny-all")


def nobody(req: ApprovalRequest) -> None:
    """No approver available (a subagent without a standing answer): the request waits."""
    return None


APPROVERS: dict[str, Approver] = {"approve-all": approve_all, "deny-all": deny_all, "none": nobody}
"""Non-interactive approvers by name (what a subagent inherits from its parent)."""


def standing_answer(rule: Rule) -> Decision | None:
    """A rule's own decision, attributed to its source."""
    if rule.decision is None:
        return None
    return Decision(rule.decision, rule.source, rule.reason or f"standing {rule.decision} in {rule.source}")
