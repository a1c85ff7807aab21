"""What a run's journal says has happened, folded into the few facts the harness acts on.

Built by reading the journal on start or resume and kept current by feeding it every record the
harness appends. Only journaled facts count: a step is done when its intent has a commit (or its
approval was denied); an approval is answered only when a decision record exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.journal.errors import AgentError
from walkback.journal.segments import read_run


@dataclass
class RunState:
    header: dict[str, Any] = field(default_factory=dict)
    plan: list[Any] | None = None
    """The steps of the last accepted ``plan`` record (scripted planner)."""
    intents: dict[int, dict[str, Any]] = field(default_factory=dict)
    terminal: dict[int, dict[str, Any]] = field(default_factory=dict)
    """intent lsn -> its ``commit`` or ``fail`` record."""
    requests: dict[int, dict[str, Any]] = field(default_factory=dict)
    decisions: dict[int, dict[str, Any]] = field(default_factory=dict)
    """request lsn -> its (last) ``approval.decision``."""
    spawns: dict[int, dict[str, Any]] = field(default_factory=dict)
    ends: dict[int, dict[str, Any]] = field(default_factory=dict)
    """spawn lsn -> ``agent.end``."""
    checkpoint: dict[str, Any] | None = None
    ended: str | None = None
    """``run.end`` status, if the run has ended."""

    @classmethod
    def load(cls, path: Path) -> RunState:
        records, result = read_run(path)  # archived segments too: the plan and early steps
        if not result.intact:
            raise AgentError(f"journal is damaged ({result.damage_summary()}); recover it first", path=path)
        if result.dialect != "v1":
            raise AgentError(
                f"the agent continues only v1 journals, not the {result.dialect} dialect", path=path
            )
        st = cls()
        for r in records:
            st.note(r.lsn, r.data)
        return st

    def note(self, lsn: int, rec: dict[str, Any]) -> None:
        """Fold one record (as appended or as read) into the state."""
        typ = rec.get("type")
        ref = rec.get("ref")
        if typ == "run.start":
            self.header = rec
        elif typ == "plan" and "steps" in rec:
            self.plan = rec["steps"]
        elif typ == "intent":
            self.intents[lsn] = rec
        elif typ in ("commit", "fail") and isinstance(ref, int):
            self.terminal[ref] = rec
        elif typ == "approval.request":
            self.requests[lsn] = rec
        elif typ == "approval.decision" and isinstance(ref, int):
            self.decisions[ref] = rec
        elif typ == "agent.spawn":
            self.spawns[lsn] = rec
        elif typ == "agent.end" and isinstance(ref, int):
            self.ends[ref] = rec
        elif typ == "checkpoint":
            self.checkpoint = rec
        elif typ == "run.end":
            self.ended = str(rec.get("status"))

    # -- questions the harness asks -----------------------------------------------------------
    def committed(self, lsn: int) -> bool:
        return self.terminal.get(lsn, {}).get("type") == "commit"

    def open_intents(self) -> list[int]:
        """Intents without a commit or fail, in lsn order."""
        return sorted(lsn for lsn in self.intents if lsn not in self.terminal)

    def failed_step(self) -> int | None:
        """A step whose intent failed for real (not an in-doubt effect a human settled), uncommitted."""
        committed = {i["step"] for lsn, i in self.intents.items() if self.committed(lsn)}
        for lsn, rec in self.terminal.items():
            step = self.intents.get(lsn, {}).get("step")
            if rec.get("type") == "fail" and not rec.get("in_doubt") and step not in committed:
                return int(step) if isinstance(step, int) else None
        return None

    def next_step(self) -> int:
        """The step after the last one settled by a commit or a denied approval.

        A fan-out step is not counted here: re-entering it adopts the children it already has.
        """
        settled = [int(i["step"]) for lsn, i in self.intents.items() if self.committed(lsn)]
        settled += [int(r["step"]) for lsn, r in self.requests.items() if self.denied(lsn)]
        return max(settled, default=-1) + 1

    def denied(self, request_lsn: int) -> bool:
        return self.decisions.get(request_lsn, {}).get("decision") == "deny"

    def gate_request(self, step: int) -> int | None:
        """The policy approval request already journaled for ``step`` (not an in-doubt question)."""
        for lsn, r in self.requests.items():
            if r.get("step") == step and "ref" not in r:
                return lsn
        return None

    def unanswered(self) -> list[int]:
        return sorted(lsn for lsn in self.requests if lsn not in self.decisions)

    def spawns_at(self, step: int) -> dict[str, int]:
        """child agent id -> spawn lsn, for the spawns journaled at ``step``."""
        return {str(s["child_agent"]): lsn for lsn, s in self.spawns.items() if s.get("step") == step}
