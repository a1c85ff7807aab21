"""The deterministic planner: the steps of a task file, validated and journaled as a ``plan``.

The whole plan is checked before the first step runs and written as one ``plan`` record; a
resumed run reads its steps back from that record (not from the task file, which may have
changed), so the same step index always means the same action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..actions import Action, PlanError, parse_action

if TYPE_CHECKING:
    from ..harness import Harness


class ScriptedPlanner:
    name = "scripted"

    def __init__(self, steps: list[Any] | None = None, *, source: str = "task") -> None:
        """``steps``: raw step objects for a new run; None to take them from the journal's plan."""
        self.steps = steps
        self.source = source
        self.actions: list[Action] = []

    def begin(self, h: Harness) -> None:
        if h.state.plan is not None:
            self.actions = [
                parse_action(s, f"{h.writer.path}: plan step {i}") for i, s in enumerate(h.state.plan)
            ]
            return
        if self.steps is None:
            raise PlanError("this run has no plan record to continue from", path=h.writer.path)
        for i, raw in enumerate(self.steps):
            try:
                self.actions.append(parse_action(raw, f"{self.source}: step {i}"))
            except PlanError as e:
                h.reject(i, raw, e.message)
                raise
        h.append("plan", steps=[a.to_json() for a in self.actions])

    def next_action(self, step: int, h: Harness) -> Action | None:
        return self.actions[step] if step < len(self.actions) else None

    def observe(self, step: int, action: Action, outcome: dict[str, Any]) -> None:
        """A script does not adapt to outcomes."""
