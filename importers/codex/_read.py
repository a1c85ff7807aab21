"""Reading Codex rollouts into the builder: one rollout per agent, subagents after their parent.

Every line becomes at least one event. A record Codex writes twice (the ``event_msg`` copy of a
message, a ``token_count`` repeated with the same total, the settings of every request) becomes
``other`` the second time, saying so; a tool call that changes several files gives one event per
file (``sub`` = the file's place in the patch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, INFERRED, KIND_INDEX
from walkback.timeline.sources import JsonLines
from walkback.timeline.table import ROW

from ..fields import integer, mapping, relative, string
from ..records import first_record, json_lines, written_lately
from ._calls import interpret, outcome, output_text, short

ROOT_AGENT = "main"
RECENT_CALLS = 8192
"""Calls remembered after their output, for the end events that follow it (exec_command_end)."""
RECENT_TEXTS = 16
SETTINGS = ("model", "approval_policy", "sandbox_policy", "effort", "cwd", "permission_profile")
HARNESS_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions",
    "# AGENTS.md",
    "<INSTRUCTIONS>",
)
"""User-role messages Codex writes itself (not the person's prompt)."""


@dataclass
class Rollout:
    """A rollout file and what its first line says about it."""

    path: Path
    meta: dict[str, Any]
    """The ``session_meta`` payload (empty when the first line is not one)."""

    @property
    def thread(self) -> str:
        return string(self.meta.get("id"))

    @property
    def spawn(self) -> dict[str, Any]:
        sub = mapping(self.meta.get("source")).get("subagent")
        return mapping(mapping(sub).get("thread_spawn"))

    @property
    def parent(self) -> str:
        return string(self.spawn.get("parent_thread_id"))

    @property
    def label(self) -> str:
        return string(self.meta.get("agent_nickname") or self.spawn.get("agent_nickname")) or string(
            self.meta.get("agent_role") or self.spawn.get("agent_role")
        )


def head(path: Path) -> Rollout:
    rec = first_record(path) or {}
    meta = mapping(rec.get("payload")) if rec.get("type") == "session_meta" else {}
    return Rollout(path, meta)


def rollouts_in(folder: Path) -> list[Rollout]:
    """The heads of the rollout files directly in ``folder``, by name (their start time)."""
    try:
        names = sorted(p for p in folder.glob("rollout-*.jsonl") if p.is_file())
    except OSError:
        return []
    return [head(p) for p in names]


def family(root: Rollout, others: list[Rollout]) -> list[Rollout]:
    """``root`` and its descendants among ``others``, each after its parent."""
    out, seen = [root], {root.thread}
    k = 0
    while k < len(out):
        parent = out[k].thread
        for r in others:
            if parent and r.parent == parent and r.thread not in seen:
                seen.add(r.thread)
                out.append(r)
        k += 1
    return out


def one_tree(rollouts: list[Rollout]) -> list[Rollout]:
    """The rollouts of a folder as one family (root first), or empty when they are not one."""
    threads = {r.thread for r in rollouts}
    roots = [r for r in rollouts if r.parent not in threads]
    if len(roots) != 1:
        return []
    tree = family(roots[0], rollouts)
    return tree if len(tree) == len(rollouts) else []


class RolloutReader:
    """Reads one rollout (see the module docstring); one instance per file."""

    def __init__(self, b: SessionBuilder, rollout: Rollout, agent: str, spawns: dict[str, int]) -> None:
        self.b = b
        self.path = rollout.path
        self.agent = agent
        self.src = b.source(JsonLines(rollout.path))
        self.spawns = spawns
        """Child thread id -> the call whose output names it (-1 until found)."""
        self.clock = MinuteClock()
        self.cwd = string(rollout.meta.get("cwd"))
        self.model = ""
        self.settings: dict[str, Any] | None = None
        self.models: list[list[Any]] = []
        self.last_total: Any = None
        self.calls: dict[str, tuple[str, list[tuple[int, str]]]] = {}
        """call id -> (tool, [(event, target)...]) of calls seen lately (opened, or recently closed)."""
        self.asks: dict[str, list[int]] = {}
        self.recent: dict[str, dict[str, tuple[int, str]]] = {}
        """role -> recent texts -> (line, channel), to tell a message from its copy."""
        self.last_compaction = ""
        self.turn = ""
        """How the last turn ended (``completed``, ``cancelled``), ``open`` while one runs."""
        self.task = ""
        self.prompted = False
        """The task came from a prompt event (the best source: later messages do not change it)."""
        self.line = self.offset = self.length = 0
        self.ts = math.nan
        self.last_ts = math.nan
        """The time of the last record that had one."""
        self.ids = b.pool.index.get
        self.agent_id = b.intern(agent)
        self.due_at = b.chunk * ROW.size
        """Pending row bytes at which a chunk is due (``SessionBuilder.due``, inlined)."""

    # -- rows -----------------------------------------------------------------------------------
    def add(
        self,
        kind: str,
        typ: str,
        *,
        tool: str = "",
        target: str = "",
        status: str = "",
        ref: int = -1,
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        """One event of the current record (the hot path: strings interned by a lookup first)."""
        get, intern = self.ids, self.b.intern
        return self.b.row(
            KIND_INDEX[kind],
            get(typ) or intern(typ or "?"),
            -1,
            self.ts,
            self.agent_id,
            get(tool) or intern(tool),
            get(target) or intern(target),
            get(status) or intern(status),
            ref,
            self.src,
            self.line,
            self.offset,
            self.length,
            sub,
            flags,
        )

    def run(self) -> Iterator[None]:
        b = self.b
        clock = self.clock
        for offset, line, length, rec in json_lines(self.path, b, self.src):
            self.offset, self.line, self.length = offset, line, length
            self.ts = ts = clock(rec.get("timestamp"))
            if ts == ts:
                self.last_ts = ts
            typ = rec.get("type")
            payload = rec.get("payload")
            if typ.__class__ is not str or payload.__class__ is not dict:
                self.add("other", string(typ))
                continue
            ptype = payload.get("type")
            by_payload = BY_TYPE.get(typ)
            if by_payload is None:
                handler = HANDLERS.get(typ)
            else:
                handler = by_payload.get(ptype) if ptype.__class__ is str else None
            if handler is None:
                self.add("other", ptype if ptype.__class__ is str and ptype else typ)
            else:
                handler(self, payload, ptype if ptype.__class__ is str and ptype else typ)
            if len(b.rows) >= self.due_at:
                yield
        b.session.header.setdefault("models", {})[str(self.src)] = self.models
        b.session.header.setdefault("turn_settings", {})[str(self.src)] = self.settings or {}

    # -- the run, its turns and settings --------------------------------------------------------
    def session_meta(self, p: dict[str, Any], typ: str) -> None:
        self.cwd = string(p.get("cwd")) or self.cwd
        self.add("run_start", typ)

    def turn_context(self, p: dict[str, Any], typ: str) -> None:
        self.cwd = string(p.get("cwd")) or self.cwd
        model = string(p.get("model"))
        if model and model != self.model:
            self.model = model
            self.models.append([self.line, model])
        if self.settings is None:
            self.settings = {k: p[k] for k in SETTINGS if k in p}
        self.add("other", typ)

    def task_started(self, p: dict[str, Any], typ: str) -> None:
        self.turn = "open"
        self.add("run_start", typ)

    def task_complete(self, p: dict[str, Any], typ: str) -> None:
        self.turn = "completed"
        self.add("run_end", typ, status="completed")

    def turn_aborted(self, p: dict[str, Any], typ: str) -> None:
        self.turn = "cancelled"
        self.add("run_end", typ, status="cancelled")

    # -- what was said ------------------------------------------------------------------------
    def said(self, role: str, parts: list[str], typ: str, channel: str) -> None:
        """A message, or ``other`` when it repeats one the other channel just wrote."""
        self.last_compaction = ""
        recent = self.recent.setdefault(role, {})
        if parts and all(recent.get(t, (0, channel))[1] != channel for t in parts):
            for t in parts:
                recent.pop(t, None)
            self.add("other", typ)
            return
        if len(recent) > RECENT_TEXTS:
            recent.clear()
        for t in parts:
            recent[t] = (self.line, channel)
        self.add("message", typ)
        if role == "user" and parts and not self.prompted:
            # the prompt event says what the person typed; a user item may be Codex's own context
            if channel == "event" or not self.task and not parts[0].lstrip().startswith(HARNESS_PREFIXES):
                self.task = parts[0].strip()
                self.prompted = channel == "event"

    def message(self, p: dict[str, Any], typ: str) -> None:
        content = p.get("content")
        texts = [string(mapping(c).get("text")) for c in content] if isinstance(content, list) else []
        self.said(string(p.get("role")) or "assistant", ["\n".join(texts)], typ, "item")

    def reasoning(self, p: dict[str, Any], typ: str) -> None:
        summary = p.get("summary")
        parts = [string(mapping(s).get("text")) for s in summary] if isinstance(summary, list) else []
        self.said("reasoning", [t for t in parts if t], typ, "item")

    def user_message(self, p: dict[str, Any], typ: str) -> None:
        self.said("user", [string(p.get("message"))], typ, "event")

    def agent_message(self, p: dict[str, Any], typ: str) -> None:
        self.said("assistant", [string(p.get("message"))], typ, "event")

    def agent_reasoning(self, p: dict[str, Any], typ: str) -> None:
        self.said("reasoning", [string(p.get("text"))], typ, "event")

    # -- tool calls and their outcomes -----------------------------------------------------------
    def call(self, p: dict[str, Any], typ: str) -> None:
        self.last_compaction = ""
        c = interpret(p)
        first = c.target(0, self.cwd)
        request = -1
        if c.escalation is not None:
            request = self.add("approval_request", typ, tool=c.name, target=first, status="pending")
        flags = FILE if c.files else 0
        events = []
        for k in range(max(1, len(c.files))):
            target = c.target(k, self.cwd)
            sub = k if flags else -1
            events.append(
                (
                    self.add(
                        "tool_call", typ, tool=c.name, target=target, status="pending", sub=sub, flags=flags
                    ),
                    target,
                )
            )
        main = events[0][0]
        if request >= 0:
            self.b.session.gated[request] = main
            self.asks.setdefault(c.call_id, []).append(request)
        if c.call_id:
            self.b.open((self.src, c.call_id), main)
            self.remember(c.call_id, c.name, events)

    def remember(self, call_id: str, tool: str, events: list[tuple[int, str]]) -> None:
        if len(self.calls) >= RECENT_CALLS:
            oldest = next(iter(self.calls))
            if self.b.opened((self.src, oldest)) < 0:
                del self.calls[oldest]
        self.calls[call_id] = (tool, events)

    def settle(self, call_id: str, status: str) -> None:
        """Give every event of a call ``status`` (a refusal or failure is never turned back to ok)."""
        for i, _ in self.calls.get(call_id, ("", []))[1]:
            if status != "ok" or self.b.status_of(i) == "pending":
                self.b.set_status(i, status)

    def decide(self, call_id: str, status: str) -> None:
        """The approvals asked for a call, answered as what followed shows (inferred)."""
        tool, events = self.calls.get(call_id, ("", []))
        target = events[0][1] if events else ""
        decision = "denied" if status == "denied" else "approved"
        for request in self.asks.pop(call_id, []):
            self.add(
                "approval_decision",
                "inferred",
                tool=tool,
                target=target,
                status=decision,
                ref=request,
                flags=INFERRED,
            )

    def output(self, p: dict[str, Any], typ: str) -> None:
        call_id = string(p.get("call_id"))
        ref = self.b.close((self.src, call_id))
        status = outcome(p.get("output"))
        self.decide(call_id, status)
        tool, events = self.calls.get(call_id, ("", []))
        self.add("tool_result", typ, tool=tool, target=events[0][1] if events else "", status=status, ref=ref)
        self.settle(call_id, status)
        if ref >= 0 and any(v < 0 for v in self.spawns.values()):
            said = output_text(p.get("output"))
            for child, at in self.spawns.items():
                if at < 0 and child in said:
                    self.spawns[child] = ref

    def main_of(self, call_id: str) -> tuple[str, int, list[tuple[int, str]]]:
        tool, events = self.calls.get(call_id, ("", []))
        return tool, events[0][0] if events else -1, events

    def exec_end(self, p: dict[str, Any], typ: str) -> None:
        call_id = string(p.get("call_id"))
        tool, main, events = self.main_of(call_id)
        code = integer(p.get("exit_code"))
        status = (
            ("ok" if code == 0 else "failed") if code is not None else outcome(p.get("aggregated_output"))
        )
        self.decide(call_id, status)
        self.add(
            "tool_result", typ, tool=tool, target=events[0][1] if events else "", status=status, ref=main
        )
        if status != "ok":
            self.settle(call_id, status)

    def mcp_end(self, p: dict[str, Any], typ: str) -> None:
        call_id = string(p.get("call_id"))
        tool, main, events = self.main_of(call_id)
        result = mapping(p.get("result"))
        failed = "Err" in result or mapping(result.get("Ok")).get("isError") is True
        status = "failed" if failed else "ok"
        self.decide(call_id, status)
        self.add(
            "tool_result", typ, tool=tool, target=events[0][1] if events else "", status=status, ref=main
        )
        if failed:
            self.settle(call_id, status)

    def patch_end(self, p: dict[str, Any], typ: str) -> None:
        """One result per changed file, paired with the call's event for that file; a change no
        event of the call names (no call at all, or a patch text that did not say) is a
        file-changing event of its own."""
        call_id = string(p.get("call_id"))
        _, main, events = self.main_of(call_id)
        status = "ok" if p.get("success") is not False else "failed"
        self.decide(call_id, status)
        changes = p.get("changes")
        paths = [relative(k, self.cwd) for k in changes] if isinstance(changes, dict) else []
        by_target = {t: i for i, t in events}
        for k, path in enumerate(paths):
            call = by_target.get(path, -1)
            if call >= 0:
                self.add("tool_result", typ, tool="apply_patch", target=path, status=status, ref=call, sub=k)
            else:
                flags = FILE if status == "ok" else 0
                self.add("tool_call", typ, tool="apply_patch", target=path, status=status, sub=k, flags=flags)
        if not paths:
            self.add(
                "tool_result" if main >= 0 else "other", typ, tool="apply_patch", status=status, ref=main
            )
        if status != "ok":
            self.settle(call_id, status)

    def approval(self, p: dict[str, Any], typ: str) -> None:
        call_id = string(p.get("call_id"))
        tool, main, events = self.main_of(call_id)
        if typ == "apply_patch_approval_request":
            changes = p.get("changes")
            target = relative(next(iter(changes), ""), self.cwd) if isinstance(changes, dict) else ""
            tool = tool or "apply_patch"
        else:
            command = p.get("command")
            target = short(" ".join(map(str, command)) if isinstance(command, list) else string(command))
        request = self.add(
            "approval_request",
            typ,
            tool=tool,
            target=target or (events[0][1] if events else ""),
            status="pending",
        )
        if main >= 0:
            self.b.session.gated[request] = main
        self.asks.setdefault(call_id, []).append(request)

    def web_search(self, p: dict[str, Any], typ: str) -> None:
        query = string(mapping(p.get("action")).get("query"))
        status = "failed" if p.get("status") == "failed" else "ok"
        self.add("tool_call", typ, tool="web_search", target=short(query), status=status)

    # -- state of the work and of the context ---------------------------------------------------
    def ghost_snapshot(self, p: dict[str, Any], typ: str) -> None:
        self.add("checkpoint", typ, target=string(mapping(p.get("ghost_commit")).get("id")))

    def compaction(self, p: dict[str, Any], typ: str) -> None:
        """``compacted`` and ``context_compacted`` tell of one compaction: the second is ``other``."""
        twin = self.last_compaction not in ("", typ)
        self.last_compaction = "" if twin else typ
        self.add("other" if twin else "compaction", typ)

    def token_count(self, p: dict[str, Any], typ: str) -> None:
        total = mapping(mapping(p.get("info")).get("total_token_usage")).get("total_tokens")
        if total is None or total == self.last_total:
            self.add("other", typ)
            return
        self.last_total = total
        self.add("model_result", typ)

    def error(self, p: dict[str, Any], typ: str) -> None:
        self.add("error", typ, status="error")


Handler = Callable[[RolloutReader, dict[str, Any], str], None]
R = RolloutReader
HANDLERS: dict[str, Handler] = {
    "session_meta": R.session_meta,
    "turn_context": R.turn_context,
    "compacted": R.compaction,
    "response_item/message": R.message,
    "response_item/reasoning": R.reasoning,
    "response_item/function_call": R.call,
    "response_item/custom_tool_call": R.call,
    "response_item/local_shell_call": R.call,
    "response_item/function_call_output": R.output,
    "response_item/custom_tool_call_output": R.output,
    "response_item/web_search_call": R.web_search,
    "response_item/ghost_snapshot": R.ghost_snapshot,
    "event_msg/user_message": R.user_message,
    "event_msg/agent_message": R.agent_message,
    "event_msg/agent_reasoning": R.agent_reasoning,
    "event_msg/token_count": R.token_count,
    "event_msg/exec_command_end": R.exec_end,
    "event_msg/mcp_tool_call_end": R.mcp_end,
    "event_msg/patch_apply_end": R.patch_end,
    "event_msg/exec_approval_request": R.approval,
    "event_msg/apply_patch_approval_request": R.approval,
    "event_msg/request_permissions": R.approval,
    "event_msg/task_started": R.task_started,
    "event_msg/task_complete": R.task_complete,
    "event_msg/turn_aborted": R.turn_aborted,
    "event_msg/context_compacted": R.compaction,
    "event_msg/error": R.error,
    "event_msg/stream_error": R.error,
}
"""``type/payload.type`` (or the envelope type alone) -> what the record becomes."""
BY_TYPE: dict[str, dict[str, Handler]] = {}
"""The same, as envelope type -> payload type -> handler (one lookup each on the hot path)."""
for _key, _handler in HANDLERS.items():
    if "/" in _key:
        _outer, _inner = _key.split("/")
        BY_TYPE.setdefault(_outer, {})[_inner] = _handler


def read_family(b: SessionBuilder, rollouts: list[Rollout]) -> Iterator[None]:
    """Read a rollout and its subagents' (root first), linking each child to the call that
    spawned it, then settle the session's task and status."""
    spawns = {r.thread: -1 for r in rollouts[1:] if r.thread}
    names: dict[str, str] = {}
    root_reader: RolloutReader | None = None
    for k, r in enumerate(rollouts):
        name = ROOT_AGENT if k == 0 else _child_name(r, names)
        names[r.thread] = name
        parent = names.get(r.parent) if k else None
        spawned = spawns.get(r.thread, -1)
        agent = b.agent(
            name, parent=parent, spawned_by=spawned if spawned >= 0 else None, run=r.thread, label=r.label
        )
        reader = RolloutReader(b, r, name, spawns)
        if k == 0:
            root_reader = reader
            b.session.header = {
                key: v for key, v in r.meta.items() if key not in ("base_instructions", "instructions")
            }
        yield from reader.run()
        agent.task = agent.task or reader.task
        agent.outcome = agent.outcome or _outcome(reader.turn)
        if k == 0:
            b.session.task = reader.task
    b.interleave = len(rollouts) > 1
    if root_reader is not None:
        b.session.status = _status(b, root_reader)


def _child_name(r: Rollout, names: dict[str, str]) -> str:
    name = r.label or f"agent-{r.thread[:8] or len(names)}"
    return name if name not in names.values() else f"{name}-{r.thread[:8] or len(names)}"


def _outcome(turn: str) -> str:
    return turn if turn in ("completed", "cancelled") else ""


def _status(b: SessionBuilder, root: RolloutReader) -> str:
    """``running`` while the rollout is being written, ``crashed`` when calls or a turn were left
    open, else how the last turn ended (``unknown`` for rollouts without turn records)."""
    if written_lately(root.path, root.last_ts):
        return "running"
    if b.unanswered() or root.turn == "open":
        return "crashed"
    return root.turn or "unknown"
