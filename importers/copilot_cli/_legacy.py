"""Reading the legacy Copilot CLI session: one JSON document ``{sessionId, startTime, chatMessages[],
timeline[]}``, rewritten whole as the session goes.

``timeline`` is what the person saw (messages, tool calls with their results); ``chatMessages``
is the model's conversation (OpenAI chat messages). The document is read an entry at a time
(:mod:`importers.documents`). When the timeline has entries the chat
messages are the model's copy of it and each is ``other``; a session with an empty timeline is
read from its chat messages.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE
from walkback.timeline.sources import JsonItems

from ..documents import Damaged, Document, placeholder
from ..fields import embedded_json, mapping, string
from ._read import ROOT_AGENT
from ._tools import changes_file, target

ROLES = {"user": "user", "copilot": "assistant", "info": "info", "system": "system"}
"""Timeline entry types that are messages, with their role."""
FAILED = {"failure": "failed", "error": "failed", "rejected": "denied", "denied": "denied"}
"""A result's ``type`` other than ``success``."""


def result_status(item: dict[str, Any]) -> str:
    kind = string(mapping(item.get("result")).get("type"))
    return "ok" if kind in ("success", "") else FAILED.get(kind, "failed")


class LegacyReader:
    """Fills the builder from one legacy session document (see the module docstring)."""

    def __init__(self, b: SessionBuilder, path: Path) -> None:
        self.b = b
        self.path = path
        self.clock = MinuteClock()
        self.src = 0
        self.offset = -1

    def add(self, kind: str, typ: str, ts: float, **kw: Any) -> int:
        return self.b.add(kind, type=typ, ts=ts, agent=ROOT_AGENT, src=self.src, offset=self.offset, **kw)

    def read(self) -> Iterator[None]:
        with Document(self.path) as doc:
            if not doc.is_object() or not (doc.is_array("timeline") or doc.is_array("chatMessages")):
                raise ImporterError(
                    "no timeline or chatMessages array in this Copilot CLI session", path=self.path
                )
            yield from self.read_document(doc)

    def read_document(self, doc: Document) -> Iterator[None]:
        b = self.b
        header = {k: doc.get(k) for k in doc.names() if k not in ("timeline", "chatMessages")}
        b.session.header = {k: v for k, v in header.items() if not isinstance(v, Damaged)}
        b.agent(ROOT_AGENT, run=string(header.get("sessionId")))
        self.src = b.source(doc.source("sessionId") if "sessionId" in header else JsonItems(self.path, ""))
        self.add("run_start", "session", self.clock(header.get("startTime")))
        entries = yield from self.items(doc, "timeline", self.entry)
        yield from self.items(doc, "chatMessages", self.copy if entries else self.chat)
        b.session.status = "crashed" if b.unanswered() else "unknown"

    def items(self, doc: Document, key: str, read: Any) -> Generator[None, None, int]:
        """Read the entries of one array; returns how many there were."""
        if not doc.is_array(key):
            return 0
        source = doc.source(key)
        self.src = self.b.source(source)
        n = 0
        for k, item in doc.items(key, source):
            self.offset, n = k, n + 1
            if isinstance(item, dict):
                read(item)
            else:
                placeholder(self.b, self.src, k, item, "an entry that is not an object")
            if self.b.due():
                yield
        return n

    # -- the timeline ----------------------------------------------------------------------------
    def entry(self, item: dict[str, Any]) -> None:
        typ = string(item.get("type")) or "?"
        ts = self.clock(item.get("timestamp"))
        if typ in ROLES:
            self.add("message", typ, ts)
            text = string(item.get("text")).strip()
            if typ == "user" and text and not self.b.session.task:
                self.b.session.task = text
                self.b.agent(ROOT_AGENT, task=text)
        elif typ == "tool_call_requested":
            self.call(item, ts, -1)
        elif typ == "tool_call_completed":
            cid = string(item.get("callId"))
            call = self.b.close((self.src, cid)) if cid else -1
            if call < 0:  # a call written once, with its result: the call, then the result
                call = self.call(item, ts, 0, wait=False)
            status = result_status(item)
            self.add("tool_result", typ, ts, tool=string(item.get("name")), status=status, ref=call, sub=1)
            self.b.set_status(call, status)
        elif typ == "error":
            self.add("error", typ, ts, status="error")
        else:
            self.add("other", typ, ts)

    def call(self, item: dict[str, Any], ts: float, sub: int, *, wait: bool = True) -> int:
        name = string(item.get("name")) or "?"
        args = mapping(embedded_json(item.get("arguments")))
        i = self.add(
            "tool_call",
            string(item.get("type")) or "?",
            ts,
            tool=name,
            target=target(args, ""),
            status="pending",
            sub=sub,
            flags=FILE if changes_file(name, args) else 0,
        )
        if wait:
            self.b.open((self.src, string(item.get("callId")) or f"#{self.offset}"), i)
        return i

    # -- chat messages ---------------------------------------------------------------------------
    def copy(self, item: dict[str, Any]) -> None:
        self.add("other", "chatMessage", float("nan"))

    def chat(self, item: dict[str, Any]) -> None:
        """An OpenAI chat message: its text, the calls it asks for, or a tool's answer."""
        role = string(item.get("role")) or "?"
        nan = float("nan")
        before = self.b.count
        if role == "tool":
            call = self.b.close((self.src, string(item.get("tool_call_id"))))
            self.add("tool_result", "chatMessage", nan, status="ok", ref=call)
            if call >= 0:
                self.b.set_status(call, "ok")
            return
        if item.get("content"):
            self.add("message", "chatMessage", nan)
            text = item.get("content")
            if role == "user" and isinstance(text, str) and text.strip() and not self.b.session.task:
                self.b.session.task = text.strip()
        calls = item.get("tool_calls")
        for k, tc in enumerate(calls if isinstance(calls, list) else ()):
            fn = mapping(mapping(tc).get("function"))
            name = string(fn.get("name")) or "?"
            args = mapping(embedded_json(fn.get("arguments")))
            i = self.add(
                "tool_call",
                "chatMessage",
                nan,
                tool=name,
                target=target(args, ""),
                status="pending",
                sub=k,
                flags=FILE if changes_file(name, args) else 0,
            )
            self.b.open((self.src, string(mapping(tc).get("id")) or f"#{self.offset}.{k}"), i)
        if self.b.count == before:
            self.add("other", "chatMessage", nan)
