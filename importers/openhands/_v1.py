"""Reading an OpenHands V1 (software-agent-sdk) conversation: a folder with ``base_state.json`` and
``events/event-<seq>-<uuid>.json``, one event per file, in the order of their sequence numbers.

Each event file is its own source (``JsonItems(file, "")``, offset -1). ``base_state.json`` gives the
``run_start`` and the token usage of each model response (``stats.usage_to_metrics.<id>.token_usages``,
matched to events by ``llm_response_id``: one ``model_result`` per response, where it is first
named). The SDK writes no confirmation request: under an ``AlwaysConfirm`` or ``ConfirmRisky``
policy an action that needed confirmation gets an inferred ``approval_request``, answered by a
``UserRejectObservation`` (denied) or inferred approved when the action's observation arrives.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.sources import JsonItems

from ..fields import integer, mapping, relative, string
from ..records import BOM
from ._common import ROOT_AGENT, WRITES, ResponseSeen

BASE_STATE = "base_state.json"
EVENTS = "events"
EVENT_FILE = re.compile(r"event-(\d+)-[0-9A-Za-z-]+\.json")
RISK = {"LOW": 1, "MEDIUM": 2, "HIGH": 3}
TARGET_KEYS = ("path", "command", "url", "query", "pattern", "code", "task")
TARGET_CHARS = 240
FILE_TOOLS = frozenset({"file_editor", "str_replace_editor"})
CONTROL = frozenset({"PauseEvent", "ConversationStateUpdateEvent", "CondensationRequest"})
"""Events about the conversation's own state: ``other``."""


def event_files(folder: Path) -> list[Path]:
    """The conversation's event files, by sequence number."""
    try:
        found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := EVENT_FILE.fullmatch(p.name))]
    except OSError:
        return []
    return [p for _, p in sorted(found)]


def conversation_of(path: Path) -> Path | None:
    """The conversation folder ``path`` belongs to (itself, the folder of its ``base_state.json``,
    or the folder above an event file's ``events/``), or None for a lone file."""
    if path.is_dir():
        return path
    if path.name == BASE_STATE:
        return path.parent
    if path.parent.name == EVENTS and EVENT_FILE.fullmatch(path.name):
        return path.parent.parent
    return None


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def needs_confirmation(policy: dict[str, Any], risk: str) -> bool:
    """What the SDK's confirmation policy decides for an action of this security risk."""
    kind = string(policy.get("kind"))
    if kind == "AlwaysConfirm":
        return True
    if kind != "ConfirmRisky":
        return False
    if risk not in RISK:
        return policy.get("confirm_unknown", True) is not False
    return RISK[risk] >= RISK.get(string(policy.get("threshold")), RISK["HIGH"])


def action_target(action: dict[str, Any], workspace: str) -> str:
    """What an action acts on: its command, file (relative to the workspace), URL, query ..."""
    for key in TARGET_KEYS:
        value = action.get(key)
        if isinstance(value, str) and value.strip():
            first = value.strip().split("\n", 1)[0][:TARGET_CHARS]
            return relative(first, workspace) if key == "path" else first
    return ""


def changes_file(tool: str, action: dict[str, Any]) -> bool:
    kind = string(action.get("kind"))
    editor = tool in FILE_TOOLS or kind in ("FileEditorAction", "StrReplaceEditorAction")
    return editor and string(action.get("command")) in WRITES and bool(string(action.get("path")))


def text_of(content: Any) -> str:
    """The text parts of an SDK content list (or a string)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(string(mapping(c).get("text")) for c in content)
    return ""


class V1Reader:
    """Fills the builder from one V1 conversation folder (see the module docstring)."""

    def __init__(self, b: SessionBuilder, folder: Path, files: list[Path] | None = None) -> None:
        self.b = b
        self.folder = folder
        self.files = files if files is not None else event_files(folder / EVENTS)
        self.clock = MinuteClock()
        self.src = 0
        self.agent = ROOT_AGENT
        self.workspace = ""
        self.policy: dict[str, Any] = {}
        self.usages: dict[str, tuple[int, int]] = {}
        """Response id -> (source, index) of its token usage in base_state.json."""
        self.responses = ResponseSeen()
        self.asked: dict[str, int] = {}
        """Action id -> its inferred approval request, until answered."""
        self.status = ""

    def add(self, kind: str, typ: str, ts: float, **kw: Any) -> int:
        kw.setdefault("src", self.src)
        kw.setdefault("offset", -1)
        return self.b.add(kind, type=typ, ts=ts, agent=self.agent, **kw)

    def read(self) -> Iterator[None]:
        b = self.b
        b.session.header["layout"] = "v1"
        self.base_state(self.folder / BASE_STATE)
        b.agent(ROOT_AGENT, run=self.folder.name)  # when base_state.json names no id
        for path in self.files:
            self.src = b.source(JsonItems(path, ""))
            ev = self.load(path)
            if ev is not None:
                self.event(ev)
            if b.due():
                yield
        b.session.status = self.session_status()

    def load(self, path: Path) -> dict[str, Any] | None:
        """One event file, or None after a placeholder row saying why it cannot be read."""
        try:
            ev = orjson.loads(path.read_bytes().removeprefix(BOM))
        except (OSError, orjson.JSONDecodeError) as e:
            why = e.strerror if isinstance(e, OSError) else f"not JSON: {e}"
            self.b.placeholder(src=self.src, line=0, offset=-1, length=0, reason=f"{path.name}: {why}")
            return None
        if not isinstance(ev, dict):
            self.b.placeholder(
                src=self.src, line=0, offset=-1, length=0, reason=f"{path.name}: not an object"
            )
            return None
        return ev

    def base_state(self, path: Path) -> None:
        if not path.is_file():
            return
        self.src = self.b.source(JsonItems(path, ""))
        state = self.load(path)
        if state is None:
            return
        self.b.session.header.update({k: state[k] for k in ("id", "execution_status") if k in state})
        self.policy = mapping(state.get("confirmation_policy"))
        self.b.session.header["policy"] = string(self.policy.get("kind"))
        self.workspace = string(mapping(state.get("workspace")).get("working_dir"))
        self.status = string(state.get("execution_status"))
        self.b.agent(ROOT_AGENT, run=string(state.get("id")) or self.folder.name)
        self.add("run_start", "base_state", math.nan)
        metrics = mapping(mapping(state.get("stats")).get("usage_to_metrics"))
        for usage_id, m in metrics.items():
            usages = mapping(m).get("token_usages")
            if not isinstance(usages, list):
                continue
            src = self.b.source(JsonItems(path, f"/stats/usage_to_metrics/{_pointer(usage_id)}/token_usages"))
            for k, u in enumerate(usages):
                rid = string(mapping(u).get("response_id"))
                if rid:
                    self.usages.setdefault(rid, (src, k))

    def session_status(self) -> str:
        if self.status in ("finished", "stuck", "error"):
            return {"finished": "completed", "stuck": "failed", "error": "failed"}[self.status]
        if self.status == "paused":
            return "cancelled"
        return "crashed" if self.b.unanswered() else "unknown"

    # -- events ----------------------------------------------------------------------------------
    def event(self, ev: dict[str, Any]) -> None:
        kind = string(ev.get("kind")) or "?"
        ts = self.clock(ev.get("timestamp"))
        self.model_result(ev, kind, ts)
        before = self.b.count
        if kind == "SystemPromptEvent":
            self.add("message", kind, ts)
        elif kind == "MessageEvent":
            self.message(ev, kind, ts)
        elif kind == "ActionEvent":
            self.action(ev, kind, ts)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self.observation(ev, kind, ts)
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            self.add("compaction", kind, ts)
        if self.b.count == before:
            self.add("other", kind, ts)

    def model_result(self, ev: dict[str, Any], kind: str, ts: float) -> None:
        rid = string(ev.get("llm_response_id"))
        where = self.usages.get(rid)
        if where is not None and self.responses.first_id(rid):
            self.add("model_result", kind, ts, src=where[0], offset=where[1])

    def message(self, ev: dict[str, Any], kind: str, ts: float) -> None:
        self.add("message", kind, ts)
        msg = mapping(ev.get("llm_message"))
        said = text_of(msg.get("content")).strip()
        if string(msg.get("role")) == "user" and said and not self.b.session.task:
            self.b.session.task = said
            self.b.agent(ROOT_AGENT, task=said)

    def action(self, ev: dict[str, Any], kind: str, ts: float) -> None:
        if text_of(ev.get("thought")).strip() or string(ev.get("reasoning_content")).strip():
            self.add("message", kind, ts, sub=0)
        action = mapping(ev.get("action"))
        tool = string(ev.get("tool_name")) or string(action.get("kind")) or "?"
        target = action_target(action, self.workspace)
        flags = FILE if changes_file(tool, action) else 0
        call = self.add("tool_call", kind, ts, tool=tool, target=target, status="pending", flags=flags, sub=1)
        aid = string(ev.get("id"))
        self.b.open(("action", aid), call)
        cid = string(ev.get("tool_call_id"))
        if cid:
            self.b.open(("tool", cid), call)
        if needs_confirmation(self.policy, string(ev.get("security_risk"))):
            request = self.add(
                "approval_request",
                kind,
                ts,
                tool=tool,
                target=target,
                status="pending",
                flags=INFERRED,
                sub=2,
            )
            self.b.session.gated[request] = call
            self.asked[aid] = request
        self.delegations(action, call)

    def delegations(self, action: dict[str, Any], call: int) -> None:
        """A delegation's sub-agents, started by its call (``ids``, or one ``task`` to spawn)."""
        if "Delegate" not in string(action.get("kind")):
            return
        ids = action.get("ids")
        tasks = action.get("tasks")
        names = [string(x) for x in ids] if isinstance(ids, list) else []
        if not names and string(action.get("operation") or action.get("command")) == "spawn":
            names = [string(action.get("sub_conversation_id")) or f"{call}"]
        for k, name in enumerate(n for n in names if n):
            task = tasks[k] if isinstance(tasks, list) and k < len(tasks) else action.get("task")
            self.b.agent(f"delegate-{name}", parent=ROOT_AGENT, spawned_by=call, task=string(task))

    def observation(self, ev: dict[str, Any], kind: str, ts: float) -> None:
        aid = string(ev.get("action_id"))
        call = self.b.close(("action", aid)) if aid else -1
        cid = string(ev.get("tool_call_id"))
        by_tool = self.b.close(("tool", cid)) if cid else -1
        call = call if call >= 0 else by_tool
        if call < 0 and kind == "AgentErrorEvent":
            self.add("error", kind, ts, status="error")
            return
        obs = mapping(ev.get("observation"))
        if kind == "UserRejectObservation":
            status = "denied"
        elif kind == "AgentErrorEvent" or obs.get("is_error") is True:
            status = "failed"
        else:
            code = integer(obs.get("exit_code"))
            status = "failed" if code not in (None, 0, -1) else "ok"
        request = self.asked.pop(aid, -1) if aid else -1
        if request >= 0 or kind == "UserRejectObservation":
            decision = "denied" if status == "denied" else "approved"
            flags = 0 if decision == "denied" else INFERRED
            self.add(
                "approval_decision",
                kind,
                ts,
                status=decision,
                ref=request if request >= 0 else call,
                flags=flags,
                sub=0,
            )
            if request >= 0:
                self.b.set_status(request, decision)
        self.add("tool_result", kind, ts, tool=string(ev.get("tool_name")), status=status, ref=call, sub=1)
        if call >= 0:
            self.b.set_status(call, status)
