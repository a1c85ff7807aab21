"""Reading Claude Code session files into the builder: one reader per file, one agent per file.

Every record becomes at least one event: an assistant record gives one ``model_result`` per
response (its first record; the event is re-pointed at the response's latest record, whose usage
is complete), one ``message`` for its text and thinking, one ``tool_call`` per ``tool_use`` block
(``sub`` = the block's index); a user record gives a ``message`` and one ``tool_result`` per
``tool_result`` block, paired with the call by id, plus an inferred ``approval_decision`` when the
call was refused. A second turn under one parent adds a ``branch`` before the record's events.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, INFERRED, KIND_INDEX
from walkback.timeline.sources import JsonItems, JsonLines

from ..records import json_lines
from ._tree import Forks
from ._vocab import (
    CALL_BLOCKS,
    COMPACT_SUBTYPES,
    FILE_TOOLS,
    INTERRUPTED,
    SPAWN_TOOLS,
    TURN_END_SUBTYPES,
    prompt_of,
    refusal,
    result_text,
    target_of,
)

K = KIND_INDEX
HEADER_KEYS = ("sessionId", "cwd", "version", "gitBranch", "slug", "permissionMode")
"""Facts of the session taken from the first record that has each."""


@dataclass
class Shared:
    """What the files of one session tell each other about subagents."""

    with_files: set[str]
    """Subagent ids whose own file is read (their inline ``agent_progress`` copies are ``other``)."""
    spawns: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Task/Agent call id -> (its event, the subagent type asked for)."""
    agent_call: dict[str, str] = field(default_factory=dict)
    """Subagent id -> the id of the call that started it (from the result's ``agentId``)."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """Subagent id -> the status its call's result reported."""


class FileReader:
    """Reads one session or subagent file (see the module docstring)."""

    def __init__(
        self, b: SessionBuilder, path: Path, agent: str, shared: Shared, *, items: bool = False
    ) -> None:
        self.b = b
        self.path = path
        self.agent = agent
        self.shared = shared
        self.src = b.source(JsonItems(path, "/loglines") if items else JsonLines(path))
        self.intern = b.intern
        self.ids = b.pool.index
        self.who = b.intern(agent)
        """Pool id of the agent the current record's events belong to."""
        self.clock = MinuteClock()
        self.line = self.offset = self.length = 0
        self.ts = math.nan
        self.last_ts = math.nan
        self.untimed: list[int] = []
        """Events of records before the file's first time (they take that time)."""
        self.cwd = ""
        self.header: dict[str, Any] = {}
        self.prompt = ""
        self.responses: dict[str, int] = {}
        """Message id -> its model_result event (one per response, however many records stream it)."""
        self.forks = Forks()
        self.calls: dict[Hashable, tuple[int, int]] = {}
        """Open call key -> (tool, target) pool ids, for the result's row."""
        self.turn: list[Hashable] = []
        """Call keys of the latest assistant response."""
        self.response = ""
        self.end = ""
        """What the latest user or assistant record was: ``assistant``, ``user``, ``interrupted``."""
        self.after_end = ""
        """Subtype of the latest system record after it (``turn_duration`` ...), if any."""
        self.boundary = False
        """A compact boundary was read and its summary message has not come yet."""

    # -- rows -----------------------------------------------------------------------------------
    def sid(self, value: str) -> int:
        found = self.ids.get(value)
        return found if found is not None else self.intern(value)

    def add(
        self,
        kind: int,
        typ: str,
        *,
        tool: int = 0,
        target: int = 0,
        status: str = "",
        ref: int = -1,
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        i = self.b.row(
            kind,
            self.sid(typ),
            -1,
            self.ts,
            self.who,
            tool,
            target,
            self.sid(status),
            ref,
            self.src,
            self.line,
            self.offset,
            self.length,
            sub,
            flags,
        )
        if self.ts != self.ts:
            self.untimed.append(i)
        return i

    # -- the file -------------------------------------------------------------------------------
    def run(self) -> Iterator[None]:
        b = self.b
        done = b.count
        for offset, line, length, rec in json_lines(self.path, b, self.src):
            if b.count > done:
                self.placed(done)
            self.offset, self.line, self.length = offset, line, length
            self.record(rec)
            done = b.count
            if b.due():
                yield
        if b.count > done:
            self.placed(done)

    def placed(self, first: int) -> None:
        """Placeholder rows from ``first`` on (lines that did not parse) take the time before them."""
        for i in range(first, self.b.count):
            if self.last_ts == self.last_ts:
                self.b.set_time(i, self.last_ts)
            else:
                self.untimed.append(i)

    def run_items(self, items: list[Any]) -> Iterator[None]:
        """The records of the web variant's ``loglines`` array (``offset`` is the item's index)."""
        b = self.b
        for k, rec in enumerate(items):
            self.offset, self.line, self.length = k, 0, 0
            if isinstance(rec, dict):
                self.record(rec)
            else:
                b.placeholder(
                    src=self.src,
                    line=0,
                    offset=k,
                    length=0,
                    reason=f"a JSON {type(rec).__name__}, not an object",
                )
            if b.due():
                yield

    def record(self, rec: dict[str, Any]) -> None:
        ts = self.clock(rec.get("timestamp"))
        if ts == ts:
            if self.untimed:
                for i in self.untimed:
                    self.b.set_time(i, ts)
                self.untimed = []
            self.last_ts = ts
        else:
            ts = self.last_ts
        self.ts = ts
        cwd = rec.get("cwd")
        if cwd.__class__ is str:
            self.cwd = cwd
        if len(self.header) < len(HEADER_KEYS):
            for key in HEADER_KEYS:
                if key not in self.header and isinstance(rec.get(key), str):
                    self.header[key] = rec[key]
        typ: Any = rec.get("type")
        handler = HANDLERS.get(typ) if typ.__class__ is str else None
        if handler is None:
            self.add(K["other"], typ if typ.__class__ is str and typ else "?")
        else:
            handler(self, rec, typ)

    def status(self) -> str:
        """How the file's conversation ended (see ``docs/formats/claude-code.md``)."""
        if self.end == "assistant":
            if not self.after_end and any(self.b.opened(k) >= 0 for k in self.turn):
                return "crashed"
            if not self.turn:
                return "completed"
        if self.after_end in TURN_END_SUBTYPES:
            return "completed"
        return "cancelled" if self.end == "interrupted" else "unknown"

    # -- conversation -----------------------------------------------------------------------------
    def fork(self, rec: dict[str, Any], typ: str) -> None:
        """A ``branch`` event when this turn is the second under its parent."""
        parent, uuid = rec.get("parentUuid"), rec.get("uuid")
        if parent.__class__ is str and uuid.__class__ is str and self.forks.fork(parent, uuid):
            self.add(K["branch"], typ)

    def assistant(self, rec: dict[str, Any], typ: str, nested: bool = False) -> None:
        m = rec.get("message")
        if m.__class__ is not dict:
            self.add(K["other"], typ)
            return
        if rec.get("isApiErrorMessage") is True:
            self.add(K["error"], typ, status="error")
            return
        if not nested:
            self.fork(rec, typ)
            self.end, self.after_end = "assistant", ""
        mid = m.get("id")
        if mid.__class__ is str and mid:
            j = self.responses.get(mid)
            if j is None:
                self.responses[mid] = self.add(K["model_result"], typ)
            else:
                self.b.readdress(j, line=self.line, offset=self.offset, length=self.length)
            if not nested and mid != self.response:
                self.response, self.turn = mid, []
        else:
            if not nested:
                self.response, self.turn = "", []
            if m.get("usage") or m.get("model"):
                self.add(K["model_result"], typ)
        content = m.get("content")
        if content.__class__ is not list:
            self.add(K["message"], typ)
            return
        calls: list[int] = []
        results: list[int] = []
        said = False
        for k, c in enumerate(content):
            t = c.get("type") if c.__class__ is dict else None
            if t.__class__ is not str:
                said = True
            elif t in CALL_BLOCKS:
                calls.append(k)
            elif t.endswith("tool_result"):
                results.append(k)  # a server tool's result (web search) inside the response
            else:
                said = True
        if said or not (calls or results):
            self.add(K["message"], typ)
        for k in calls:
            self.call(k, content[k], typ, nested)
        for k in results:
            self.result(k, content[k], typ, None)

    def call(self, k: int, block: dict[str, Any], typ: str, nested: bool) -> None:
        name = block.get("name")
        name = name if name.__class__ is str else ""
        args = block.get("input")
        target = target_of(name, args, self.cwd)
        tool, gid = self.sid(name), self.sid(target)
        flags = FILE if target and name in FILE_TOOLS else 0
        i = self.add(K["tool_call"], typ, tool=tool, target=gid, status="pending", sub=k, flags=flags)
        cid = block.get("id")
        if cid.__class__ is str and cid:
            key = (self.src, cid)
            self.b.open(key, i)
            self.calls[key] = (tool, gid)
            if not nested:
                self.turn.append(key)
            if name in SPAWN_TOOLS:
                kind = args.get("subagent_type") if isinstance(args, dict) else None
                self.shared.spawns[cid] = (i, kind if isinstance(kind, str) else "")

    def user(self, rec: dict[str, Any], typ: str, nested: bool = False) -> None:
        m = rec.get("message")
        if m.__class__ is not dict:
            self.add(K["other"], typ)
            return
        content: Any = m.get("content")
        if rec.get("isCompactSummary") is True and not nested:
            self.add(K["message"] if self.boundary else K["compaction"], typ)
            self.boundary = False
            return
        results = (
            [k for k, c in enumerate(content) if c.__class__ is dict and c.get("type") == "tool_result"]
            if content.__class__ is list
            else []
        )
        if not results or len(results) < len(content):
            if not nested:
                self.fork(rec, typ)
            self.add(K["message"], typ)
            if not self.prompt and not rec.get("isMeta"):
                self.prompt = prompt_of(content)
            if not nested:
                first = (
                    content
                    if content.__class__ is str
                    else (result_text(content[:1]) if content.__class__ is list else "")
                )
                self.end = "interrupted" if first.startswith(INTERRUPTED) else "user"
                self.after_end = ""
        if results:
            tur = rec.get("toolUseResult")
            own = True
            for k in results:
                own = self.result(k, content[k], typ, tur) and own
            if not nested and not own:  # results of the latest response do not end its turn
                self.end, self.after_end = "user", ""

    def result(self, k: int, block: dict[str, Any], typ: str, tur: Any) -> bool:
        """Read one result block; True when it answers a call of the latest response."""
        cid = block.get("tool_use_id")
        key: Hashable = (self.src, cid) if cid.__class__ is str else None
        ref = self.b.close(key) if key is not None else -1
        tool, gid = self.calls.pop(key, (0, 0))
        failed = block.get("is_error") is True
        who = refusal(tur, result_text(block.get("content"))) if failed else ""
        status = "denied" if who else ("failed" if failed else "ok")
        self.add(K["tool_result"], typ, tool=tool, target=gid, status=status, ref=ref, sub=k)
        if ref >= 0:
            self.b.set_status(ref, status)
        if who:
            self.add(
                K["approval_decision"],
                typ,
                tool=tool,
                target=gid,
                status="denied",
                ref=ref,
                sub=k,
                flags=INFERRED,
            )
        if key is not None and cid in self.shared.spawns and isinstance(tur, dict):
            agent_id = tur.get("agentId")
            if isinstance(agent_id, str) and agent_id:
                self.shared.agent_call.setdefault(agent_id, cid)
                outcome = tur.get("status")
                self.shared.outcomes[agent_id] = outcome if isinstance(outcome, str) else status
        return key in self.turn

    # -- everything else ------------------------------------------------------------------------
    def progress(self, rec: dict[str, Any], typ: str) -> None:
        data: Any = rec.get("data")
        kind = data.get("type") if data.__class__ is dict else None
        if kind == "agent_progress":
            self.agent_progress(rec, data)
        else:
            self.add(K["other"], kind if kind.__class__ is str and kind else typ)

    def agent_progress(self, rec: dict[str, Any], data: dict[str, Any]) -> None:
        """A running subagent's record copied into its parent: the child's own event when its
        file is absent, else ``other`` (the file is read instead)."""
        agent_id: Any = data.get("agentId")
        inner: Any = data.get("message")
        inner_type = inner.get("type") if inner.__class__ is dict else None
        if (
            agent_id.__class__ is not str
            or not agent_id
            or agent_id in self.shared.with_files
            or inner_type not in ("user", "assistant")
        ):
            self.add(K["other"], "agent_progress")
            return
        parent_call = rec.get("parentToolUseID")
        name = "agent-" + agent_id
        if name not in self.b.session.agents:
            spawn = self.shared.spawns.get(parent_call) if isinstance(parent_call, str) else None
            prompt = data.get("prompt")
            self.b.agent(
                name,
                parent=self.agent,
                run=str(self.header.get("sessionId", "")),
                spawned_by=spawn[0] if spawn else None,
                task=prompt if isinstance(prompt, str) else "",
                label=spawn[1] if spawn else "",
            )
            if isinstance(parent_call, str):
                self.shared.agent_call.setdefault(agent_id, parent_call)
        outer = self.who
        self.who = self.sid(name)
        try:
            if inner_type == "user":
                self.user(inner, "agent_progress", nested=True)
            else:
                self.assistant(inner, "agent_progress", nested=True)
        finally:
            self.who = outer

    def system(self, rec: dict[str, Any], typ: str) -> None:
        sub = rec.get("subtype")
        sub = sub if sub.__class__ is str and sub else typ
        if sub in COMPACT_SUBTYPES:
            self.add(K["compaction"], sub)
            self.boundary = True
        elif sub == "api_error" or rec.get("level") == "error":
            self.add(K["error"], sub, status="error")
        elif sub == "local_command":
            self.add(K["message"], sub)
        else:
            self.add(K["other"], sub)
        self.after_end = sub

    def summary(self, rec: dict[str, Any], typ: str) -> None:
        self.add(K["compaction"], typ)

    def snapshot(self, rec: dict[str, Any], typ: str) -> None:
        self.add(K["checkpoint"], typ)


HANDLERS = {
    "assistant": FileReader.assistant,
    "user": FileReader.user,
    "progress": FileReader.progress,
    "system": FileReader.system,
    "summary": FileReader.summary,
    "file-history-snapshot": FileReader.snapshot,
}
"""Record ``type`` -> what reads it (anything else is ``other``)."""
