"""Reading a SWE-agent ``.traj`` (0.x and 1.x): one JSON object with ``trajectory`` (the steps
run: action, observation, thought), ``history`` (the model's conversation) and ``info`` (how the
run ended, the submitted diff, model stats).

Read in the order of the conversation: each ``history`` message is a ``message``, except that an
assistant message whose ``action`` is the next step's brings that step as a ``tool_call``
(``trajectory`` item, ``sub`` 1), and the observation the model was shown next is its
``tool_result``. A step the history does not show gives its thought, call and result itself
(``sub`` 0, 1, 2), as does the observation of a step the history stops before (the last
``submit``). Then ``info``: a ``model_result`` with the model stats, one file-changing call per file
of the submission, the ``run_end``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder

from ..describe import TOTALS
from ..documents import MISSING, Damaged, Document, placeholder
from ..fields import embedded_json, mapping, string
from ._common import ROOT_AGENT, command_target, command_tool, end_status, submission_calls

NAN = math.nan


class TrajReader:
    """Fills the builder from one ``.traj`` (see the module docstring)."""

    def __init__(self, b: SessionBuilder, path: Path) -> None:
        self.b = b
        self.path = path
        self.src = 0
        self.steps: Iterator[tuple[int, Any]] = iter(())
        self.peeked: tuple[int, Any] | None = None
        """The next step, read ahead to see whether the next assistant message runs it."""
        self.seen = 0
        self.step_src = 0
        self.open_step = -1
        """The step whose call waits for the observation the history shows next (-1: none)."""

    def add(self, kind: str, typ: str, *, src: int, offset: int, **kw: Any) -> int:
        return self.b.add(kind, type=typ, agent=ROOT_AGENT, src=src, offset=offset, **kw)

    def read(self) -> Iterator[None]:
        with Document(self.path) as doc:
            if not doc.is_object() or not (doc.is_array("trajectory") or doc.is_array("history")):
                raise ImporterError(
                    "not a SWE-agent trajectory: no trajectory or history array", path=self.path
                )
            yield from self.read_document(doc)

    def read_document(self, doc: Document) -> Iterator[None]:
        b = self.b
        b.agent(ROOT_AGENT)
        environment = doc.get("environment")
        b.session.header = {"environment": environment} if isinstance(environment, str) else {}
        config = mapping(embedded_json(doc.get("replay_config")))
        b.session.header["model"] = string(mapping(mapping(config.get("agent")).get("model")).get("name"))
        for key in ("replay_config", "environment"):
            if doc.get(key) is not MISSING:
                self.add("run_start", key, src=b.source(doc.source(key)), offset=-1)
                break
        steps = doc.source("trajectory")
        self.step_src = b.source(steps)
        self.steps = doc.items("trajectory", steps) if doc.is_array("trajectory") else iter(())
        if doc.is_array("history"):
            history = doc.source("history")
            self.src = b.source(history)
            for k, item in doc.items("history", history):
                if isinstance(item, dict):
                    self.message(k, item)
                else:
                    placeholder(b, self.src, k, item, "a message that is not an object")
                if b.due():
                    yield
        self.close_step()
        while (upcoming := self.take()) is not None:
            self.step(*upcoming, from_history=False)
            if b.due():
                yield
        info = doc.get("info")
        if isinstance(info, Damaged):
            placeholder(b, b.source(doc.source("info")), -1, info, "")
        elif info is MISSING:
            b.session.status = "crashed" if self.seen else "unknown"
        else:
            self.info(mapping(info), b.source(doc.source("info")))

    def peek(self) -> tuple[int, Any] | None:
        if self.peeked is None:
            self.peeked = next(self.steps, None)
        return self.peeked

    def take(self) -> tuple[int, Any] | None:
        upcoming, self.peeked = self.peek(), None
        if upcoming is not None:
            self.seen += 1
        return upcoming

    # -- the conversation -------------------------------------------------------------------------
    def message(self, k: int, item: dict[str, Any]) -> None:
        role = string(item.get("role")) or "?"
        typ = "demo" if item.get("is_demo") else (string(item.get("message_type")) or role)
        if role == "assistant":
            self.close_step()
            self.add("message", typ, src=self.src, offset=k)
            action = item.get("action")
            upcoming = self.peek()
            if upcoming is not None and isinstance(action, str) and _same(action, upcoming[1]):
                self.take()
                self.step(*upcoming, from_history=True)
            return
        if role in ("user", "tool") and self.open_step >= 0 and not item.get("is_demo"):
            call = self.b.close(("step", self.open_step))
            self.add("tool_result", typ, src=self.src, offset=k, status="ok", ref=call)
            if call >= 0:
                self.b.set_status(call, "ok")
            self.open_step = -1
            return
        self.add("message", typ, src=self.src, offset=k)
        content = item.get("content")
        if role == "user" and typ != "demo" and isinstance(content, str) and not self.b.session.task:
            self.b.session.task = content.strip()
            self.b.agent(ROOT_AGENT, task=content.strip()[:2000])

    def step(self, k: int, step: Any, *, from_history: bool) -> None:
        """Step ``k``'s call; its result now, unless the history shows the observation next."""
        if not isinstance(step, dict):
            placeholder(self.b, self.step_src, k, step, "a step that is not an object")
            return
        action = string(step.get("action"))
        tool = command_tool(action)
        if not from_history and string(step.get("thought")).strip():
            self.add("message", "step", src=self.step_src, offset=k, sub=0)
        call = self.add(
            "tool_call",
            "step",
            src=self.step_src,
            offset=k,
            tool=tool,
            target=command_target(action),
            status="pending",
            sub=1,
        )
        self.b.open(("step", k), call)
        if from_history:
            self.open_step = k
        else:
            self.result(k)

    def result(self, k: int) -> None:
        """Step ``k``'s observation, from the step itself."""
        call = self.b.close(("step", k))
        self.add("tool_result", "step", src=self.step_src, offset=k, status="ok", ref=call, sub=2)
        if call >= 0:
            self.b.set_status(call, "ok")

    def close_step(self) -> None:
        if self.open_step >= 0:
            self.result(self.open_step)
            self.open_step = -1

    # -- info ------------------------------------------------------------------------------------
    def info(self, info: dict[str, Any], src: int) -> None:
        b = self.b
        if isinstance(info.get("model_stats"), dict):
            self.add("model_result", TOTALS, src=src, offset=-1)
        submission_calls(b, info, src=src, agent=ROOT_AGENT)
        exit_status = string(info.get("exit_status"))
        status = end_status(exit_status)
        self.add("run_end", "info", src=src, offset=-1, status=status)
        b.session.status = status


def _same(action: str, step: Any) -> bool:
    """The history's action is this step's (the model's command, as run)."""
    return action.strip() == string(mapping(step).get("action")).strip()
