"""Roo Code task folders: Cline's layout, and subtasks.

Roo Code (a Cline fork) writes the same three files per task, under
``…/rooveterinaryinc.roo-cline/tasks/<task id>/``; it starts a task with a ``say: text`` (Cline:
``say: task``) and records ``isAnswered`` / ``autoApprovalDecision`` and the request's
``apiProtocol``. Its ``newTask`` tool (``{"tool": "newTask", "mode", "content"}``) delegates to a
subtask: a new task folder beside the parent's, under the same ``tasks`` folder, whose first message
is that ``content``; when it completes, the parent says ``subtask_result`` with its result (which
closes the call) and goes on. A subtask is the parent's subagent: agent ``task-<its id>``, child of
the agent whose call started it, read with its own subtasks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock

from ..base import HEAD_BYTES
from ..records import BOM
from ._read import AGENT, UI, Spawn, TaskReader, ui_file

FOLDER = "rooveterinaryinc.roo-cline"
"""Roo Code's extension storage folder (VS Code's ``globalStorage/<publisher>.<name>``)."""
_SIGNS = (b'"isAnswered"', b'"autoApprovalDecision"', b'"apiProtocol"', b'"subtask_result"', b'"newTask')
CLOCK_SLACK = 1.0
"""Seconds a subtask's first message may seem to precede the call that started it."""
FIRST_MESSAGE_BYTES = 1 << 20
"""Bytes of a sibling's UI messages read at most to find its first message (the task it was given);
the first 64 KiB are enough but for a task pasted in whole."""


def _first(data: bytes) -> dict[str, object] | None:
    """The first message of a UI messages array (its start, possibly cut), or None."""
    text = data.removeprefix(BOM).decode("utf-8", "replace").lstrip()
    if not text.startswith("["):
        return None
    try:
        first, _ = json.JSONDecoder().raw_decode(text, len(text) - len(text[1:].lstrip()))
    except json.JSONDecodeError:
        return None
    return first if isinstance(first, dict) else None


def is_roo(path: Path, ui_head: bytes) -> bool:
    """A Roo Code task: under Roo's storage folder, started by a ``say: text``, or with a field only
    Roo writes in its first messages."""
    if FOLDER in path.resolve().parts:
        return True
    first = _first(ui_head)
    if first is not None and first.get("type") == "say" and first.get("say") == "text":
        return True
    return any(sign in ui_head for sign in _SIGNS)


def _task_of(folder: Path) -> tuple[str, float] | None:
    """A task folder's first message text and time (what it was asked), or None."""
    try:
        with open(folder / UI, "rb") as f:
            data = f.read(HEAD_BYTES)
            first = _first(data)
            if first is None and len(data) == HEAD_BYTES:  # a first message longer than the head
                first = _first(data + f.read(FIRST_MESSAGE_BYTES - HEAD_BYTES))
    except OSError:
        return None
    if first is None or not isinstance(first.get("text"), str):
        return None
    return str(first["text"]).strip(), MinuteClock()(first.get("ts"))  # as the reader reads times


class Subtasks:
    """The task folders beside a task, by the first message they were given."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.by_task: dict[str, list[tuple[float, Path]]] | None = None

    def child(self, spawn: Spawn) -> Path | None:
        """The sibling folder a ``newTask`` call started: first message = its content, begun at
        or after the call (the earliest such, each taken once)."""
        if self.by_task is None:
            self.by_task = {}
            for folder in sorted(self.root.parent.iterdir()):
                if folder != self.root and folder.is_dir() and (found := _task_of(folder)) is not None:
                    self.by_task.setdefault(found[0], []).append((found[1], folder))
            for candidates in self.by_task.values():
                candidates.sort(key=lambda c: (math.isnan(c[0]), c[0]))  # times not known last
        candidates = self.by_task.get(spawn.content, [])
        for k, (ts, folder) in enumerate(candidates):
            if math.isnan(ts) or math.isnan(spawn.ts) or ts >= spawn.ts - CLOCK_SLACK:
                del candidates[k]
                return folder
        return None


def read_roo(b: SessionBuilder, path: Path) -> Iterator[None]:
    """A Roo Code task and, recursively, the subtasks its ``newTask`` calls started."""
    ui = ui_file(path)
    b.agent(AGENT, run=ui.parent.name)  # the root first, its subtasks after it
    root = TaskReader(b, ui)
    root.roo = True
    yield from root.read()
    siblings = Subtasks(ui.parent)
    queue: list[tuple[TaskReader, Spawn]] = [(root, s) for s in root.spawns]
    api_sources = [root.api_src]
    while queue:
        parent, spawn = queue.pop(0)
        folder = siblings.child(spawn)
        if folder is None:
            continue
        name = f"task-{folder.name}"
        label = spawn.mode or "subtask"
        b.agent(name, parent=parent.agent, spawned_by=spawn.call, run=folder.name, label=label)
        child = TaskReader(b, folder / UI, agent=name)
        child.roo = True
        yield from child.read()
        b.agent(name, task=child.task).outcome = child.ended or ("crashed" if child.open else "")
        api_sources.append(child.api_src)
        queue += [(child, s) for s in child.spawns]
    root.finish()
    b.session.header["api_sources"] = [s for s in api_sources if s >= 0]
    b.interleave = len(b.session.agents) > 1
