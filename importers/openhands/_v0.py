"""Reading an OpenHands V0 trajectory: one JSON list of events, each an action (``action``,
``args``) or an observation (``observation``, ``content``, ``extras``) whose ``cause`` is the id of
the action it answers. Every event is ``JsonItems(path, "")`` item ``k``.

Confirmation mode writes an action twice: first ``awaiting_confirmation`` (the request), then, once
the person answered, again ``confirmed`` or ``rejected`` under a new id (the decision); the call is
the first one, and its observation may name either id. A ``delegate`` action starts a subagent: the
events until its ``delegate`` observation are the delegate's. The list is read an event at a time
(:mod:`importers.documents`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, INFERRED

from ..documents import Document, placeholder
from ..fields import integer, mapping, string
from ._common import ROOT_AGENT, ResponseSeen, exit_status, v0_command

MESSAGES = frozenset({"message", "system"})
NOTES = frozenset({"change_agent_state", "recall", "null", "condensation_request", "agent_state_changed"})
"""Actions and observations about the agent's own state: ``other``."""
FILE_ACTIONS = frozenset({"edit", "write"})
TARGET_CHARS = 240


def v0_target(action: str, args: dict[str, Any]) -> str:
    """What a V0 action acts on: its command, code, file or URL (first line)."""
    for key in ("command", "code", "path", "url", "browser_actions", "name"):
        value = args.get(key)
        if isinstance(value, str) and value.strip() and not (key == "command" and action == "edit"):
            return value.strip().split("\n", 1)[0][:TARGET_CHARS]
    return ""


class V0Reader:
    """Fills the builder from one V0 trajectory (see the module docstring)."""

    def __init__(self, b: SessionBuilder, path: Path) -> None:
        self.b = b
        self.path = path
        self.clock = MinuteClock()
        self.src = 0
        self.offset = 0
        self.agents = [ROOT_AGENT]
        """The agent of the events read now: the main agent, then each delegate in turn."""
        self.responses = ResponseSeen()
        self.asked: dict[str, tuple[int, int]] = {}
        """Tool call id -> (call, approval request) while the request waits for its answer."""
        self.decided: set[int] = set()
        """Calls whose approval decision is already an event."""
        self.ended = ""
        """How the main agent ended (``finish``: completed, ``reject``: failed)."""

    def add(self, kind: str, typ: str, ts: float, **kw: Any) -> int:
        return self.b.add(
            kind, type=typ, ts=ts, agent=self.agents[-1], src=self.src, offset=self.offset, **kw
        )

    def read(self) -> Iterator[None]:
        with Document(self.path) as doc:
            if not doc.is_array(None):
                why = "not an OpenHands trajectory: the document is not a list of events"
                raise ImporterError(why, path=self.path)
            b = self.b
            b.session.header["layout"] = "v0"
            b.agent(ROOT_AGENT)
            source = doc.source(None)
            self.src = b.source(source)
            for k, ev in doc.items(None, source):
                self.offset = k
                if isinstance(ev, dict):
                    if isinstance(ev.get("action"), str):
                        self.action(ev)
                    elif isinstance(ev.get("observation"), str):
                        self.observation(ev)
                    else:
                        self.add("other", "?", self.clock(ev.get("timestamp")))
                else:
                    placeholder(b, self.src, k, ev, "an event that is not an object")
                if b.due():
                    yield
        b.session.status = self.ended or ("crashed" if b.unanswered() else "unknown")

    # -- actions ---------------------------------------------------------------------------------
    def action(self, ev: dict[str, Any]) -> None:
        act = string(ev.get("action"))
        args = mapping(ev.get("args"))
        ts = self.clock(ev.get("timestamp"))
        meta = mapping(ev.get("tool_call_metadata"))
        if self.responses.first(meta):
            self.add("model_result", act, ts)
        if act in MESSAGES:
            self.add("message", act, ts)
            content = string(args.get("content")) or string(ev.get("message"))
            if (
                act == "message"
                and ev.get("source") == "user"
                and content.strip()
                and not self.b.session.task
            ):
                self.b.session.task = content.strip()
                self.b.agent(ROOT_AGENT, task=content.strip())
        elif act in ("finish", "reject"):
            if len(self.agents) == 1:
                self.ended = "completed" if act == "finish" else "failed"
            self.add("run_end", act, ts, status="completed" if act == "finish" else "rejected")
        elif act == "delegate":
            self.delegate(ev, args, ts)
        elif act == "condensation":
            self.add("compaction", act, ts)
        elif act in NOTES:
            self.add("other", act, ts)
        else:
            self.tool_call(ev, act, args, meta, ts)

    def tool_call(
        self, ev: dict[str, Any], act: str, args: dict[str, Any], meta: dict[str, Any], ts: float
    ) -> None:
        if string(args.get("thought")).strip():
            self.add("message", act, ts)
        eid = integer(ev.get("id"))
        cid = string(meta.get("tool_call_id"))
        state = string(args.get("confirmation_state"))
        asked = self.asked.pop(cid, None) if cid and state in ("confirmed", "rejected") else None
        if asked is not None:  # the answer to a confirmation request: the same call again
            call, request = asked
            decision = "approved" if state == "confirmed" else "denied"
            self.add("approval_decision", act, ts, status=decision, ref=request)
            self.b.set_status(request, decision)
            self.decided.add(call)
            if decision == "denied":
                self.b.set_status(call, "denied")
            self.b.open(("id", eid), call)
            return
        name = string(meta.get("function_name")) or act
        command = v0_command(args) if act == "edit" else None
        flags = FILE if act in FILE_ACTIONS and command != "view" and string(args.get("path")) else 0
        call = self.add(
            "tool_call", act, ts, tool=name, target=v0_target(act, args), status="pending", flags=flags
        )
        self.b.open(("id", eid), call)
        if state == "awaiting_confirmation":
            request = self.add(
                "approval_request", act, ts, tool=name, target=v0_target(act, args), status="pending"
            )
            self.b.session.gated[request] = call
            self.asked[cid or f"#{self.offset}"] = (call, request)
        elif state == "rejected":  # refused without a request in the log (a policy, a security check)
            self.add("approval_decision", act, ts, status="denied", ref=call)
            self.b.set_status(call, "denied")
            self.decided.add(call)

    def delegate(self, ev: dict[str, Any], args: dict[str, Any], ts: float) -> None:
        eid = integer(ev.get("id"))
        child = f"delegate-{eid if eid is not None else self.offset}"
        task = string(mapping(args.get("inputs")).get("task"))
        spawn = self.add("agent_spawn", "delegate", ts, tool=string(args.get("agent")), target=child)
        self.b.agent(
            child, parent=self.agents[-1], spawned_by=spawn, task=task, label=string(args.get("agent"))
        )
        self.b.open(("id", eid), spawn)
        self.agents.append(child)

    # -- observations ----------------------------------------------------------------------------
    def observation(self, ev: dict[str, Any]) -> None:
        obs = string(ev.get("observation"))
        ts = self.clock(ev.get("timestamp"))
        cause = integer(ev.get("cause"))
        if self.responses.first(mapping(ev.get("tool_call_metadata"))):
            self.add("model_result", obs, ts)
        if obs == "delegate":
            spawn = self.b.close(("id", cause))
            child = self.b.session.agents.get(self.agents[-1])
            if len(self.agents) > 1:
                self.agents.pop()
            self.add("agent_end", obs, ts, ref=spawn, status="completed", target=child.id if child else "")
            if child is not None:
                child.outcome = "completed"
            return
        if obs in NOTES:
            self.add("other", obs, ts)
            return
        call = self.b.close(("id", cause)) if cause is not None else -1
        if call < 0 and obs == "error":
            self.add("error", obs, ts, status="error")
            return
        asked = self.asked.pop(string(mapping(ev.get("tool_call_metadata")).get("tool_call_id")), None)
        status = "denied" if obs == "user_rejected" else exit_status(obs, ev)
        if asked is not None:  # answered without the action written again: rejected, or it ran
            decision = "denied" if status == "denied" else "approved"
            flags = 0 if decision == "denied" else INFERRED
            self.add("approval_decision", obs, ts, status=decision, ref=asked[1], flags=flags)
            self.b.set_status(asked[1], decision)
            self.decided.add(asked[0])
        elif obs == "user_rejected" and call >= 0 and call not in self.decided:
            self.add("approval_decision", obs, ts, status="denied", ref=call)
        self.add("tool_result", obs, ts, status=status, ref=call)
        if call >= 0:
            self.b.set_status(call, status)
