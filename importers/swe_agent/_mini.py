"""Reading a mini-swe-agent ``*.traj.json``: ``{info, messages, trajectory_format}``, the messages
in OpenAI chat form.

Two generations write it. 1.x (``"trajectory_format": "mini-swe-agent-1"``) keeps the messages as
the model saw them: an assistant message runs the one ```` ```bash ```` block of its text (a
message with none, or several, ran nothing: mini answered with a format error), and the next user
message is its observation (``<returncode>N</returncode>`` then the output; the command that
submitted has the submission instead). 2.x (``mini-swe-agent-1.1``) adds ``extra`` (the raw model
response with its usage and cost, the actions run, a command's return code) and, for tool-calling
models, ``tool_calls`` answered by ``tool`` messages, and ends with an ``exit`` message.

An assistant message is a ``message`` (when it says something), a ``model_result`` (its response's
usage and cost) and one ``tool_call`` per command it ran (``sub`` = the command's index); a
``tool`` message, or a ``user`` message while a command waits, is the result. ``info`` brings the
run's totals (a ``model_result`` of type ``model_stats``: cost and API calls), the submission's file
changes and the ``run_end`` (its reason: ``info.exit_status``).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.session import parse_time

from ..describe import TOTALS
from ..documents import MISSING, Damaged, Document, placeholder
from ..fields import embedded_json, integer, mapping, string
from ._common import ROOT_AGENT, command_target, end_status, submission_calls

NAME = "mini-swe-agent"
_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
"""A command block as mini 1.x finds it in the model's text (``mswea_bash_command``: 1.x configs
that fence commands apart from the examples)."""
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")


def calls_of(message: dict[str, Any]) -> list[tuple[str, str]]:
    """``(call id, command)`` of each command an assistant message runs."""
    given = message.get("tool_calls")
    if isinstance(given, list) and given:
        out = []
        for tc in given:
            tc = mapping(tc)
            args = mapping(embedded_json(mapping(tc.get("function")).get("arguments")))
            out.append((string(tc.get("id")), string(args.get("command"))))
        return out
    actions = mapping(message.get("extra")).get("actions")
    if isinstance(actions, list):
        return [(string(mapping(a).get("tool_call_id")), string(mapping(a).get("command"))) for a in actions]
    blocks = _BLOCK.findall(string(message.get("content")))
    return [("", blocks[0].strip())] if len(blocks) == 1 else []  # 1.x runs exactly one block


def return_code(message: dict[str, Any]) -> int | None:
    """A command's exit code: ``extra.returncode`` (2.x), else the observation's ``<returncode>``."""
    code = integer(mapping(message.get("extra")).get("returncode"))
    if code is not None:
        return code
    content = message.get("content")
    m = _RETURNCODE.search(content) if isinstance(content, str) else None
    return int(m.group(1)) if m else None


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
        self.submission: str | None = None
        """What the run submitted (``info``), when it did: 1.x's observation of the command that
        submitted is that text, with no return code."""

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
        info = doc.get("info")
        facts = mapping(info)
        b.session.header = {
            k: v for k in ("trajectory_format", "instance_id") if isinstance(v := doc.get(k), str)
        }
        b.session.header["model"] = string(
            mapping(mapping(facts.get("config")).get("model")).get("model_name")
        )
        if string(facts.get("exit_status")).lower().startswith("submitted"):
            self.submission = string(facts.get("submission")).strip()
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
        if info is not MISSING:
            self.src, self.offset = b.source(doc.source("info")), -1
            if isinstance(info, Damaged):
                placeholder(b, self.src, -1, info, "")
            else:
                self.info(facts)
        b.session.status = self.ended or ("crashed" if self.waiting else "unknown")

    def info(self, info: dict[str, Any]) -> None:
        """The run's totals, the submission's file changes, and the end when no exit message said it."""
        if isinstance(info.get("model_stats"), dict):
            self.add("model_result", TOTALS, float("nan"))
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
            status = self.outcome(m)
            self.add("tool_result", role, ts, status=status, ref=call)
            if call >= 0:
                self.b.set_status(call, status)
            return
        self.add("message", role, ts)
        content = m.get("content")
        if role == "user" and isinstance(content, str) and content.strip() and not self.b.session.task:
            self.b.session.task = content.strip()
            self.b.agent(ROOT_AGENT, task=content.strip()[:2000])

    def outcome(self, m: dict[str, Any]) -> str:
        """A result's status: by its return code; without one, the submission is ``ok`` and
        anything else (a timeout, an error) ``failed``."""
        code = return_code(m)
        if string(mapping(m.get("extra")).get("exception_info")):
            return "failed"
        if code is not None:
            return "ok" if code == 0 else "failed"
        return "ok" if string(m.get("content")).strip() == self.submission else "failed"

    def answered(self, cid: str) -> int:
        """The call a result answers: by its id, else the oldest waiting."""
        for k, (waiting_id, call) in enumerate(self.waiting):
            if cid and waiting_id == cid:
                del self.waiting[k]
                return call
        return self.waiting.popleft()[1] if self.waiting and not cid else -1
