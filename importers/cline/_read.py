"""Reading a Cline (or Roo Code) task folder: the UI messages in order, the results from the API
history.

``ui_messages.json`` is the timeline (each message has its time, ``ts`` in ms): what the user and
the model said, each tool use and command (``say``, or ``ask`` when it waited for the user's
approval), each API request with its tokens and cost, each checkpoint. The answer to an ``ask`` is
not written down: it is inferred from what follows (the tool's result says whether the user denied
it), and marked ``INFERRED``. A tool's result goes to the model with the next API request, so the
results of the tools used since the last request are placed just before the next one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.sources import JsonItems, JsonItemSpans

from ..documents import Damaged, Skeleton, placeholder
from ..fields import embedded_json, mapping, string
from ..records import BOM, written_lately
from ._results import Pairing, Result, in_request, results

AGENT = "main"
NEW_TASK = "new_task"
"""Roo Code's tool that delegates to a subtask (``{"tool": "newTask", "mode", "content"}``)."""
FINISH_TASK = "finishTask"
"""Roo Code's ``ask: tool`` that ends a subtask (its ``attempt_completion``), handing back to the parent."""
SUBTASK_RESULT = "subtask_result"
"""Roo Code's ``say`` in the parent that brings a subtask's result back (it closes the call)."""
UI, API, META = "ui_messages.json", "api_conversation_history.json", "task_metadata.json"
TOOLS: dict[str, tuple[str, ...]] = {
    "editedExistingFile": ("replace_in_file", "write_to_file", "apply_diff", "edit_file", "apply_patch"),
    "newFileCreated": ("write_to_file", "new_rule", "apply_patch"),
    "fileDeleted": ("delete_file", "apply_patch"),
    "appliedDiff": ("apply_diff",),
    "insertContent": ("insert_content",),
    "searchAndReplace": ("search_and_replace",),
    "readFile": ("read_file",),
    "listFilesTopLevel": ("list_files",),
    "listFilesRecursive": ("list_files",),
    "listCodeDefinitionNames": ("list_code_definition_names",),
    "searchFiles": ("search_files",),
    "webFetch": ("web_fetch",),
    "webSearch": ("web_search",),
    "codebaseSearch": ("codebase_search",),
    "useSkill": ("use_skill",),
    "summarizeTask": ("summarize_task",),
    "newTask": (NEW_TASK,),
}
"""The UI's name of a tool message -> the API tool names it may stand for (the first is its name)."""
FILE_TOOLS = frozenset(
    {
        "editedExistingFile",
        "newFileCreated",
        "fileDeleted",
        "appliedDiff",
        "insertContent",
        "searchAndReplace",
    }
)
APPROVED = frozenset({"approve", "approved", "yes"})
ERRORS = frozenset(
    {
        "error",
        "diff_error",
        "clineignore_error",
        "error_retry",
        "api_req_retried",
        "mistake_limit_reached",
        "api_req_failed",
        "command_permission_denied",
    }
)
COMPACTIONS = frozenset({"condense", "condense_context", "summarize_task"})
MESSAGES = frozenset(
    {
        "text",
        "reasoning",
        "user_feedback",
        "completion_result",
        "followup",
        "plan_mode_respond",
        "act_mode_respond",
    }
)


@dataclass
class Spawn:
    """A ``newTask`` call: the subtask it asked for (``content``: that task's first message)."""

    call: int
    content: str
    mode: str
    ts: float


@dataclass
class Open:
    """A tool the model used, waiting for its result (and, for an ``ask``, its answer)."""

    call: int
    request: int
    name: str
    names: tuple[str, ...]
    target: str


def load_array(path: Path) -> tuple[JsonItemSpans, Iterator[Any]]:
    """A JSON document that must be an array (Cline rewrites these files whole, unindented): where
    its items are read again, and the items, each parsed alone as they are iterated (a
    :class:`~walkback.importers.documents.Damaged` one when it cannot be), so a 100 MB history is
    never in memory whole."""
    doc = Skeleton(path, ("",))  # the root array's items
    try:
        numbers = doc.parsed("a JSON document")
    except ImporterError:
        doc.close()
        raise
    if not isinstance(numbers, list):
        doc.close()
        raise ImporterError(
            f"a JSON {type(numbers).__name__}, not the array of messages Cline writes", path=path
        )
    source, items = doc.array("", numbers)
    return source, _closing(doc, items)


def _closing(doc: Skeleton, items: Iterator[Any]) -> Iterator[Any]:
    with doc:
        yield from items


def tool_of(m: dict[str, Any]) -> tuple[str, str, tuple[str, ...], str, int]:
    """``(kind, name, api names, target, flags)`` of a tool, command, MCP or browser message."""
    what = string(m.get("ask") or m.get("say"))
    if what == "command":
        cmd = string(m.get("text")).removesuffix("REQ_APP").strip()
        return what, "execute_command", ("execute_command",), cmd.split("\n", 1)[0][:240], 0
    info = mapping(embedded_json(m.get("text")))
    if what == "use_mcp_server":
        target = "/".join(x for x in (string(info.get("serverName")), string(info.get("toolName"))) if x)
        return (
            what,
            string(info.get("type")) or "use_mcp_tool",
            ("use_mcp_tool", "access_mcp_resource"),
            target,
            0,
        )
    if what == "browser_action_launch":
        return what, "browser_action", ("browser_action",), string(m.get("text"))[:240], 0
    ui = string(info.get("tool"))
    names = TOOLS.get(ui, (ui or "tool",))
    name = names[0]
    body = string(info.get("content")) + string(info.get("diff"))
    if ui == "editedExistingFile" and "SEARCH" not in body and "diff" not in info:
        name = "write_to_file"
    path = string(info.get("path")) or string(info.get("regex"))
    if name == NEW_TASK:  # what the subtask is to do, by its first line
        path = string(info.get("content")).strip().split("\n", 1)[0]
    flags = FILE if ui in FILE_TOOLS and string(info.get("path")) else 0
    return ui or what, name, names, path[:1000], flags


class TaskReader:
    """Fills the builder from one task folder."""

    def __init__(self, b: SessionBuilder, ui: Path, agent: str = AGENT) -> None:
        self.b = b
        self.ui = ui
        self.agent = agent
        self.spawns: list[Spawn] = []
        """The ``newTask`` calls of this task, in order (Roo Code's subtasks)."""
        folder = ui.parent
        self.clock = MinuteClock()
        self.open: list[Open] = []
        self.task = ""
        self.requests = 0
        self.ended = ""
        self.last_ts = math.nan
        self.roo = False
        ui_source, self.messages = load_array(ui)
        self.ui_src = b.source(ui_source)
        api = folder / API
        found: list[Result] = []
        self.api_src = -1
        self.workspace = ""
        if api.is_file() and ui.name == UI:
            try:
                api_source, history = load_array(api)
            except ImporterError as e:
                b.skip(api, 0, f"the API history is unreadable ({e}); results come from the UI messages")
            else:
                self.api_src = b.source(api_source)
                found = results(self._looked_at(api, history))
        self.pairing = Pairing(found)
        meta = folder / META
        self.meta: dict[str, Any] = {}
        if meta.is_file() and ui.name == UI:
            try:
                self.meta = mapping(orjson.loads(meta.read_bytes().removeprefix(BOM)))
                b.source(JsonItems(meta, ""))
            except (OSError, orjson.JSONDecodeError) as e:
                b.skip(meta, 0, f"unreadable task metadata: {e}")

    def _looked_at(self, api: Path, history: Iterator[Any]) -> Iterator[Any]:
        """The API history's messages, the workspace taken from the first two on the way; a
        damaged one is counted as skipped (its results then come from the UI messages)."""
        for k, message in enumerate(history):
            if isinstance(message, Damaged):
                self.b.skip(api, message.line, f"API message {k}: {message.reason}")
            elif k < 2 and not self.workspace:
                self.workspace = _workspace(message)
            yield message

    def add(self, kind: str, typ: str, k: int, ts: float, **kw: Any) -> int:
        src = kw.pop("src", self.ui_src)
        return self.b.add(kind, type=typ, ts=ts, agent=self.agent, src=src, offset=k, **kw)

    # -- the stream ------------------------------------------------------------------------------
    def read(self) -> Iterator[None]:
        for k, m in enumerate(self.messages):
            if isinstance(m, dict):
                self.message(k, m)
            else:
                placeholder(self.b, self.ui_src, k, m, "a UI message that is not an object")
            if self.b.due():
                yield
        for o in self.open:
            r = self.pairing.take(o.names, o.target) if o.name != NEW_TASK else None
            if r is not None:  # saved before the request that would have sent it
                self.settle(o, r, math.nan, None, 0)

    def message(self, k: int, m: dict[str, Any]) -> None:
        ts = self.clock(m.get("ts"))
        self.last_ts = ts if not math.isnan(ts) else self.last_ts
        asks = m.get("type") == "ask"
        what = string(m.get("ask") if asks else m.get("say"))
        typ = f"{'ask' if asks else 'say'}:{what or '?'}"
        self.roo = self.roo or "isAnswered" in m or "autoApprovalDecision" in m
        if m.get("partial") is True and what in ("tool", "command", "use_mcp_server"):
            self.add("other", typ, k, ts)  # streamed in, never finished: no tool was used
        elif what == "task" or what == "text" and not asks and not self.task and not self.requests:
            self.start(k, m, ts, typ, roo_task=what == "text")
        elif what == "api_req_started":
            self.request(k, m, ts, typ)
        elif what == "api_req_finished":
            self.add("model_result", typ, k, ts, status="ok")
        elif what == "tool" and asks and tool_of(m)[0] == FINISH_TASK:  # Roo: a subtask is done
            self.add("run_end", typ, k, ts, status="completed")
            self.ended = "completed"
        elif what in ("tool", "command", "use_mcp_server", "browser_action_launch"):
            self.tool(k, m, ts, typ, asks)
        elif what == SUBTASK_RESULT and not asks:
            self.subtask_result(k, ts, typ)
        elif what == "checkpoint_created":
            self.add("checkpoint", typ, k, ts, target=string(m.get("lastCheckpointHash")))
        elif what == "completion_result" and asks:
            self.add("run_end", typ, k, ts, status="completed")
            self.ended = "completed"
        elif what in ("resume_task", "resume_completed_task"):
            self.interrupted()
            self.add("other", typ, k, ts)
            self.ended = ""
        elif what in ERRORS:
            self.add("error", typ, k, ts, status="error")
        elif what in COMPACTIONS:
            self.add("compaction", typ, k, ts)
        elif what in MESSAGES:
            self.add("message", typ, k, ts)
            self.ended = "" if what == "user_feedback" else self.ended
        else:
            self.add("other", typ, k, ts)

    def start(self, k: int, m: dict[str, Any], ts: float, typ: str, *, roo_task: bool) -> None:
        text = string(m.get("text"))
        if not self.task:
            self.task = text.strip()
            self.add("run_start", typ, k, ts, sub=0)
        i = self.add("message", typ, k, ts, sub=1)
        if roo_task:
            self.roo = True
            self.b.session.header.setdefault("task_messages", []).append(i)

    def request(self, k: int, m: dict[str, Any], ts: float, typ: str) -> None:
        info = mapping(embedded_json(m.get("text")))
        self.roo = self.roo or "apiProtocol" in info
        asked = string(info.get("request"))
        waiting = [o for o in self.open if o.name == NEW_TASK]  # until their subtask_result
        for j, o in enumerate(o for o in self.open if o.name != NEW_TASK):
            self.settle(o, self.pairing.take(o.names, o.target), ts, asked, 2 + j, at=k)
        self.open = waiting
        self.requests += 1
        model = string(mapping(m.get("modelInfo")).get("modelId"))
        call = self.add("model_call", typ, k, ts, sub=0, tool=model)
        if any(key in info for key in ("tokensIn", "tokensOut", "cost")):
            self.add("model_result", typ, k, ts, sub=1, ref=call, tool=model, status="ok")
        elif "cancelReason" in info:
            self.add("model_result", typ, k, ts, sub=1, ref=call, tool=model, status="failed")

    def tool(self, k: int, m: dict[str, Any], ts: float, typ: str, asks: bool) -> None:
        _, name, names, target, flags = tool_of(m)
        request = -1
        sub = 0
        if asks:
            request = self.add(
                "approval_request", typ, k, ts, sub=0, tool=name, target=target, status="pending"
            )
            sub = 1
        call = self.add(
            "tool_call", typ, k, ts, sub=sub, tool=name, target=target, status="pending", flags=flags
        )
        self.b.open(("call", call), call)
        if name == NEW_TASK:
            info = mapping(embedded_json(m.get("text")))
            self.spawns.append(Spawn(call, string(info.get("content")).strip(), string(info.get("mode")), ts))
        if request >= 0:
            self.b.session.gated[request] = call
            decided = string(m.get("autoApprovalDecision")).lower()
            if decided:  # Roo Code writes the auto-approval's verdict down
                ok = decided in APPROVED
                status = "approved" if ok else "denied"
                self.add(
                    "approval_decision",
                    typ,
                    k,
                    ts,
                    sub=2,
                    ref=request,
                    tool=name,
                    target=target,
                    status=status,
                )
                self.b.set_status(request, status)
                request = -1
        self.open.append(Open(call, request, name, names, target))

    # -- results and answers ---------------------------------------------------------------------
    def settle(self, o: Open, r: Result | None, ts: float, asked: str | None, sub: int, at: int = -1) -> None:
        """``o`` is over: its result from the API history, else from the request that sent it."""
        flags = 0
        if r is not None:
            status, (src, offset, part) = r.status, (self.api_src, r.item, r.block)
        else:
            quoted = in_request(asked, o.names, o.target) if asked else None
            status = "ok" if quoted is None else Result(0, 0, "", "", quoted).status
            flags = INFERRED if quoted is None else 0
            src, offset, part = self.ui_src, at, sub
        b = self.b
        tool = o.name
        if o.request >= 0:
            answer = "denied" if status == "denied" else "approved"
            b.add(
                "approval_decision",
                type="inferred",
                ts=ts,
                agent=self.agent,
                ref=o.request,
                status=answer,
                flags=INFERRED,
                target=o.target,
                tool=tool,
                src=src,
                offset=offset,
                sub=part,
            )
            b.set_status(o.request, answer)
        b.add(
            "tool_result",
            type="api" if r is not None else "request",
            ts=ts,
            agent=self.agent,
            ref=o.call,
            status=status,
            flags=flags,
            target=o.target,
            src=src,
            offset=offset,
            sub=part,
        )
        b.close(("call", o.call))
        b.set_status(o.call, status)

    def subtask_result(self, k: int, ts: float, typ: str) -> None:
        """A subtask finished: its result closes the oldest ``newTask`` call still waiting (approved,
        if it was asked: the subtask ran)."""
        o = next((o for o in self.open if o.name == NEW_TASK), None)
        if o is None:
            self.add("message", typ, k, ts)
            return
        self.open.remove(o)
        if o.request >= 0:
            self.add("approval_decision", "inferred", k, ts, ref=o.request, status="approved",
                     flags=INFERRED, target=o.target, tool=o.name, sub=0)  # fmt: skip
            self.b.set_status(o.request, "approved")
        self.add("tool_result", typ, k, ts, ref=o.call, status="ok", target=o.target, sub=1)
        self.b.close(("call", o.call))
        self.b.set_status(o.call, "ok")

    def interrupted(self) -> None:
        """The task was resumed: a tool still waiting was cut off (Cline tells the model so)."""
        for o in self.open:
            r = self.pairing.take(o.names, o.target)
            if r is not None:
                self.settle(o, r, math.nan, None, 0)
            else:
                self.b.close(("call", o.call))
                self.b.set_status(o.call, "failed")
        self.open = []

    def finish(self) -> None:
        """Say what the session is: its task, producer, workspace and status (the root task)."""
        s = self.b.session
        s.task = self.task
        s.header.update(
            {
                "task_id": self.ui.parent.name,
                "producer": "roo-code" if self.roo else "cline",
                "workspace": self.workspace,
                "sources": {"ui": self.ui_src, "api": self.api_src},
                "model_usage": [mapping(x) for x in self.meta.get("model_usage", ()) if isinstance(x, dict)]
                if isinstance(self.meta.get("model_usage"), list)
                else [],
            }
        )
        self.b.agent(self.agent, run=self.ui.parent.name, task=self.task, label=s.header["producer"])
        if self.b.unanswered():
            s.status = "crashed"
        elif written_lately(self.ui, self.last_ts):
            s.status = "running"
        else:
            s.status = self.ended or "unknown"


def _workspace(message: Any) -> str:
    """The working directory Cline names in an API message's environment details ("": none)."""
    content = mapping(message).get("content")
    for block in content if isinstance(content, list) else ():
        found = re.search(
            r"Current (?:Working|Workspace) Directory \((.+?)\)", string(mapping(block).get("text"))
        )
        if found:
            return found.group(1)
    return ""


def ui_file(path: Path) -> Path:
    """The UI messages of a task folder, or the file itself when it is one."""
    if path.is_dir():
        return path / UI
    if path.name in (API, META) and (path.parent / UI).is_file():
        return path.parent / UI
    return path


def read_task(b: SessionBuilder, path: Path) -> Iterator[None]:
    ui = ui_file(path)
    if not ui.is_file():
        raise ImporterError(f"no {UI} in this task folder", path=path)
    reader = TaskReader(b, ui)
    yield from reader.read()
    reader.finish()
