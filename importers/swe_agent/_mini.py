"""Reading a mini-swe-agent ``*.traj.json``: ``{info, messages, trajectory_format}``, the messages
in OpenAI chat form with mini's ``extra`` (the raw model response with its usage and cost, the
actions it ran, a command's return code).

An assistant message is a ``message`` (when it says something), a ``model_result`` (its response's
usage and cost) and one ``tool_call`` per call (``tool_calls``, or ``extra.actions`` when the model
wrote its commands as text; ``sub`` = the call's index); a ``tool`` message (or, in text mode, the
``user`` message after a command) is the result. The ``exit`` message is the output of the command
that submitted and the ``run_end``; ``info`` brings the submission's file changes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.session import parse_time

from ..documents import MISSING, Damaged, Document, placeholder
from ..fields import embedded_json, integer, mapping, string
from ._common import ROOT_AGENT, command_target, end_status, submission_calls


def calls_of(message: dict[str, Any]) -> list[tuple[str, str]]:
    """``(call id, command)`` of each call an assistant message makes."""
    given = message.get("tool_calls")
    if isinstance(given, list) and given:
        out = []
        for tc in given:
            tc = mapping(tc)
            args = mapping(embedded_json(mapping(tc.get("function")).get("arguments")))
            out.append((string(tc.get("id")), string(args.get("command"))))
        return out
    actions = mapping(message.get("extra")).get("actions")
    return [
        (string(mapping(a).get("tool_call_id")), string(mapping(a).get("command")))
        for a in (actions if isinstance(actions, list) else ())
    ]


def return_status(message: dict[str, Any]) -> str:
    extra = mapping(message.get("extra"))
    code = integer(extra.get("returncode"))
    return "failed" if (code not in (None, 0)) or string(extra.get("exception_info")) else "ok"


class MiniReader:
    """Fills the builder from one mini-swe-agent trajectory (see the module docstring)."""

    def __init__(self, b: SessionBuilder, path: Path) -> None:
        self.b = b
        self.path = path
        self.src = 0
        self.offset = 0
        self.waiting: deque[tuple[str, int]] = deque()
        """Calls without a result yet, in order: ``(call id, event)``."""
        self.ended = ""

    def add(self, kind: str, typ: str, ts: float, **kw: Any) -> int:
        return self.b.add(kind, type=typ, ts=ts, agent=ROOT_AGENT, src=self.src, offset=self.offset, **kw)

    def read(self) -> Iterator[None]:
        with Document(self.path) as doc:
            if not doc.is_object() or not doc.is_array("messages"):
                raise ImporterError("not a mini-swe-agent trajectory: no messages array", path=self.path)
            yield from self.read_document(doc)

    def read_document(self, doc: Document) -> Iterator[None]:
        b = self.b
        b.agent(ROOT_AGENT, run=string(doc.get("instance_id")))
        b.session.header = {
            k: v for k in ("trajectory_format", "instance_id") if isinstance(v := doc.get(k), str)
        }
        source = doc.source("messages")
        self.src = b.source(source)
        for k, message in doc.items("messages", source):
            self.offset = k
            if isinstance(message, dict):
                self.message(message)
            else:
                placeholder(b, self.src, k, message, "a message that is not an object")
            if b.due():
                yield
        info = doc.get("info")
        if info is not MISSING:
            self.src, self.offset = b.source(doc.source("info")), -1
            if isinstance(info, Damaged):
                placeholder(b, self.src, -1, info, "")
            else:
                self.info(mapping(info))
        b.session.status = self.ended or ("crashed" if self.waiting else "unknown")

    def info(self, info: dict[str, Any]) -> None:
        """The submission's file changes, and the end when no exit message said it."""
        changed = submission_calls(self.b, info, src=self.src, agent=ROOT_AGENT)
        if not self.ended:
            self.ended = end_status(string(info.get("exit_status")))
            self.add("run_end", "info", float("nan"), status=self.ended)
        elif not changed:
            self.add("other", "info", float("nan"))

    def message(self, m: dict[str, Any]) -> None:
        role = string(m.get("role")) or "?"
        extra = mapping(m.get("extra"))
        ts = parse_time(extra.get("timestamp"))
        if role == "assistant":
            if m.get("content"):
                self.add("message", role, ts)
            if isinstance(extra.get("response"), dict):
                self.add("model_result", role, ts)
            for k, (cid, command) in enumerate(calls_of(m)):
                call = self.add(
                    "tool_call",
                    role,
                    ts,
                    tool="bash",
                    target=command_target(command),
                    status="pending",
                    sub=k,
                )
                self.waiting.append((cid, call))
            return
        if role == "exit":  # the output of the command that submitted, and the end
            if self.waiting:
                call = self.waiting.pop()[1]
                self.add("tool_result", role, ts, status="ok", ref=call, sub=0)
                self.b.set_status(call, "ok")
            self.ended = end_status(string(extra.get("exit_status")) or "submitted")
            self.add("run_end", role, ts, status=self.ended, sub=1)
            return
        if role == "tool" or (role == "user" and self.waiting):
            call = self.answered(string(m.get("tool_call_id")))
            status = return_status(m)
            self.add("tool_result", role, ts, status=status, ref=call)
            if call >= 0:
                self.b.set_status(call, status)
            return
        self.add("message", role, ts)
        content = m.get("content")
        if role == "user" and isinstance(content, str) and content.strip() and not self.b.session.task:
            self.b.session.task = content.strip()
            self.b.agent(ROOT_AGENT, task=content.strip()[:2000])

    def answered(self, cid: str) -> int:
        """The call a result answers: by its id, else the oldest waiting."""
        for k, (waiting_id, call) in enumerate(self.waiting):
            if cid and waiting_id == cid:
                del self.waiting[k]
                return call
        return self.waiting.popleft()[1] if self.waiting and not cid else -1
