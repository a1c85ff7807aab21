"""Reading Gemini CLI chats: the JSONL session (a header line, message lines, ``$set`` and
``$rewindTo`` lines, applied in order) and the legacy single-document ``session-*.json``.

The JSONL writer appends a message again, whole, each time it changes (a tool call gains its
result, the tokens arrive): the Gemini CLI keeps the last version of each id. Each version adds
only what is new in it (a message whose text changed, the tokens, a call, a result); a version
with nothing new is ``other``, saying so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE
from walkback.timeline.sources import JsonItems, JsonLines

from ..fields import embedded_json, mapping, string
from ..records import BOM, RecordReader, json_lines, written_lately

ROOT_AGENT = "main"
EDIT_TOOLS = frozenset({"write_file", "replace", "edit", "smart_edit"})
"""Gemini CLI tools that change the file named by their ``file_path``."""
PATH_ARGS = ("file_path", "absolute_path", "path", "dir_path", "directory")
FINAL = {"success": "ok", "error": "failed", "cancelled": "denied"}
"""A call's own status once it is over (cancelled: declined at the prompt, or interrupted)."""
TARGET_CHARS = 240
SAFE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
"""A session id that names a folder beside the chat (and nothing outside it)."""


def content_text(content: Any) -> str:
    """A message's ``content``: a string, or parts of which the ``text`` ones are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(string(mapping(part).get("text")) for part in content)
    return ""


def call_target(name: str, args: dict[str, Any]) -> str:
    """What a call acts on: its file or folder, its command, its URL or query."""
    for key in (*PATH_ARGS, "command", "url", "pattern", "query", "prompt"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value.strip().split("\n", 1)[0][:TARGET_CHARS]
    return ""


@dataclass
class Seen:
    """What the events of one message id carry so far."""

    line: int
    said: int = 0
    """Hash of the text and thoughts last shown (0: none yet)."""
    tokens: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    """Tool call id -> the event of the call."""
    answered: set[str] = field(default_factory=set)


class ChatReader(RecordReader):
    """Fills the builder from one chat file's records (either layout)."""

    def __init__(self, b: SessionBuilder, path: Path, agent: str) -> None:
        self.b = b
        self.path = path
        self.agent = agent
        self.clock = MinuteClock()
        self.seen: dict[str, Seen] = {}
        self.task = ""
        self.src = 0
        self.line = self.offset = self.length = 0
        self.last_ts = math.nan
        """The time of the last event that had one."""

    def add(self, kind: str, typ: str, ts: float, **kw: Any) -> int:
        if ts == ts:
            self.last_ts = ts
        return super().add(kind, typ, ts, **kw)

    def lines(self) -> Iterator[None]:
        """The JSONL layout."""
        self.src = self.b.source(JsonLines(self.path))
        first = True
        for offset, line, length, rec in json_lines(self.path, self.b, self.src):
            self.offset, self.line, self.length = offset, line, length
            if first and isinstance(rec.get("sessionId"), str) and "id" not in rec:
                self.header(rec)
            elif isinstance(rec.get("$set"), dict):
                self.update(rec["$set"])
            elif isinstance(rec.get("$rewindTo"), str):
                self.add("branch", "$rewindTo", math.nan)
            elif isinstance(rec.get("id"), str):
                self.message(rec)
            else:
                self.add("other", string(rec.get("type")) or "?", self.clock(rec.get("timestamp")))
            first = False
            if self.b.due():
                yield

    def document(self) -> Iterator[None]:
        """The legacy layout: one JSON object, its ``messages`` an array."""
        try:
            doc = orjson.loads(self.path.read_bytes().removeprefix(BOM))
        except orjson.JSONDecodeError as e:
            raise ImporterError(f"not a JSON document: {e}", path=self.path) from None
        except OSError as e:
            raise ImporterError(f"cannot read: {e.strerror}", path=self.path) from None
        messages = doc.get("messages") if isinstance(doc, dict) else None
        if not isinstance(messages, list):
            raise ImporterError("no messages array in this Gemini CLI session", path=self.path)
        self.src = self.b.source(JsonItems(self.path, ""))
        self.offset = -1
        self.header({k: v for k, v in doc.items() if k != "messages"})
        self.src = self.b.source(JsonItems(self.path, "/messages"))
        for k, rec in enumerate(messages):
            self.offset = k
            if isinstance(rec, dict):
                self.message(rec)
            else:
                self.b.placeholder(
                    src=self.src,
                    line=0,
                    offset=k,
                    length=0,
                    reason="a message that is not an object",
                    text=str(rec)[:200],
                )
            if self.b.due():
                yield

    # -- records ---------------------------------------------------------------------------------
    def header(self, rec: dict[str, Any]) -> None:
        if self.agent == ROOT_AGENT:
            self.b.session.header = dict(rec)
        self.add("run_start", "session", self.clock(rec.get("startTime")))

    def update(self, changes: dict[str, Any]) -> None:
        """A ``$set``: the header changes; one that carries the message history rewrites it."""
        if self.agent == ROOT_AGENT:
            self.b.session.header.update(changes)
        self.add(
            "compaction" if "messages" in changes else "other", "$set", self.clock(changes.get("lastUpdated"))
        )

    def message(self, rec: dict[str, Any]) -> None:
        mid = string(rec.get("id"))
        typ = string(rec.get("type")) or "?"
        ts = self.clock(rec.get("timestamp"))
        seen = self.seen.get(mid) if mid else None
        if seen is None:
            seen = Seen(self.line)
            if mid:
                self.seen[mid] = seen
        before = self.b.count
        if typ == "error":
            if not seen.said:
                seen.said = 1
                self.add("error", typ, ts, status="error")
        elif typ in ("user", "gemini", "info", "warning"):
            self.said(rec, typ, ts, seen)
        if typ == "gemini":
            self.gemini(rec, ts, seen)
        if self.b.count == before:
            self.add("other", typ, ts)

    def said(self, rec: dict[str, Any], typ: str, ts: float, seen: Seen) -> None:
        words = content_text(rec.get("content"))
        thoughts = rec.get("thoughts")
        mark = hash((words, orjson.dumps(thoughts) if isinstance(thoughts, list) and thoughts else b""))
        if (words or isinstance(thoughts, list) and thoughts) and mark != seen.said:
            seen.said = mark
            self.add("message", typ, ts)
            if typ == "user" and not self.task and words.strip():
                self.task = words.strip()

    def gemini(self, rec: dict[str, Any], ts: float, seen: Seen) -> None:
        if isinstance(rec.get("tokens"), dict) and not seen.tokens:
            seen.tokens = True
            self.add("model_result", "gemini", ts)
        calls = rec.get("toolCalls")
        for k, tc in enumerate(calls if isinstance(calls, list) else ()):
            if isinstance(tc, dict):
                self.tool_call(k, tc, seen, ts)

    def tool_call(self, k: int, tc: dict[str, Any], seen: Seen, ts: float) -> None:
        """One call of a message (``sub`` = its index) and, once it is over, its result."""
        cid = string(tc.get("id")) or f"#{k}"
        name = string(tc.get("name")) or "?"
        when = self.clock(tc.get("timestamp")) if "timestamp" in tc else ts
        final = FINAL.get(string(tc.get("status")))
        call = seen.calls.get(cid, -1)
        target = call_target(name, mapping(embedded_json(tc.get("args"))))
        if call < 0:
            flags = FILE if name in EDIT_TOOLS and target else 0
            call = self.add(
                "tool_call", "toolCall", when, tool=name, target=target, status="pending", sub=k, flags=flags
            )
            seen.calls[cid] = call
            self.b.open((self.src, cid), call)
        if final is not None and cid not in seen.answered:
            seen.answered.add(cid)
            self.b.close((self.src, cid))
            self.add("tool_result", "toolCall", when, tool=name, target=target, status=final, ref=call, sub=k)
            self.b.set_status(call, final)


def read_chat(b: SessionBuilder, path: Path) -> Iterator[None]:
    """A chat file and, for a JSONL session, the subagents' chats in ``chats/<session id>/``."""
    main = ChatReader(b, path, ROOT_AGENT)
    b.agent(ROOT_AGENT, run=string(b.session.header.get("sessionId")))
    legacy = path.suffix == ".json"
    yield from main.document() if legacy else main.lines()
    session_id = string(b.session.header.get("sessionId"))
    root = b.agent(ROOT_AGENT, run=session_id)
    root.task = b.session.task = main.task
    safe = bool(SAFE_ID.fullmatch(session_id)) and not legacy
    children = sorted((path.parent / session_id).glob("*.jsonl")) if safe else []
    for child in children:
        name = f"agent-{child.stem[:8]}"
        b.agent(name, parent=ROOT_AGENT, run=child.stem)
        reader = ChatReader(b, child, name)
        yield from reader.lines()
        b.agent(name, task=reader.task)
    b.interleave = bool(children)
    b.session.status = _status(b, path, main.last_ts)


def _status(b: SessionBuilder, path: Path, last: float) -> str:
    """``running`` while written, ``crashed`` when calls were left without a result, else
    ``unknown``: a chat has no record of its end."""
    if written_lately(path, last):
        return "running"
    return "crashed" if b.unanswered() else "unknown"
