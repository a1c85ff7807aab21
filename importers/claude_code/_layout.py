"""Where a Claude Code session's files are: the session file, its subagents, their meta files.

``~/.claude/projects/<project>/<id>.jsonl`` is the session; ``<project>/<id>/subagents/agent-<a>.jsonl``
its subagents (2.1.x), each maybe with ``agent-<a>.meta.json``; older builds (2.0.x) wrote
``<project>/agent-<a>.jsonl`` beside the session, naming it in their ``sessionId``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import ImporterError

from ..fields import mapping

SUBAGENTS = "subagents"
AGENT_PREFIX = "agent-"
SESSION_ID_BYTES = 4096
"""Bytes of a 2.0.x subagent file read to find its ``sessionId`` (the first record names it early)."""


@dataclass
class Subagent:
    """One subagent file and what its meta file says."""

    path: Path
    agent_id: str
    """The id Claude Code gives the subagent (``a21e2f5``): the file is ``agent-<id>.jsonl``."""
    meta: dict[str, Any] = field(default_factory=dict)
    """``agent-<id>.meta.json``: ``agentType``, ``description``, ``toolUseId`` (newest builds)."""
    problem: str = ""
    """Why the meta file could not be read, if it could not."""

    @property
    def name(self) -> str:
        """The agent's name in the session."""
        return AGENT_PREFIX + self.agent_id


@dataclass
class Layout:
    """The files of one session: the session file (None: only subagent files were found)."""

    main: Path | None
    subagents: list[Subagent]


def subagent(path: Path) -> Subagent:
    agent_id = path.stem.removeprefix(AGENT_PREFIX)
    sub = Subagent(path, agent_id)
    meta = path.with_name(path.stem + ".meta.json")
    if meta.is_file():
        try:
            sub.meta = mapping(orjson.loads(meta.read_bytes()))
        except (OSError, orjson.JSONDecodeError) as e:
            sub.problem = f"{meta}: not readable as JSON ({e})"
    return sub


def is_subagent_file(path: Path) -> bool:
    return path.name.startswith(AGENT_PREFIX) and path.suffix == ".jsonl"


def session_files(folder: Path) -> list[Path]:
    """The session files directly in a project folder (subagent files left out)."""
    try:
        return sorted(p for p in folder.glob("*.jsonl") if p.is_file() and not is_subagent_file(p))
    except OSError:
        return []


def subagent_files(folder: Path) -> list[Path]:
    """``folder/subagents/agent-*.jsonl``, by name."""
    try:
        return sorted(p for p in (folder / SUBAGENTS).glob("agent-*.jsonl") if p.is_file())
    except OSError:
        return []


def _old_layout_children(session: Path) -> list[Path]:
    """2.0.x subagent files beside the session file that name it as their session."""
    wanted = re.compile(rb'"sessionId"\s*:\s*"' + re.escape(session.stem.encode()) + rb'"')
    out = []
    try:
        siblings = sorted(session.parent.glob("agent-*.jsonl"))
    except OSError:
        return []
    for p in siblings:
        try:
            with open(p, "rb") as f:
                head = f.read(SESSION_ID_BYTES)
        except OSError:
            continue
        if wanted.search(head):
            out.append(p)
    return out


def beside(folder: Path) -> Path:
    """The session file ``<id>.jsonl`` beside a session folder ``<id>/`` (absolute first: ``.`` or
    ``/`` have no name of their own to add a suffix to)."""
    folder = folder.absolute()
    return folder.parent / (folder.name + ".jsonl")


def layout(path: Path) -> Layout:
    """The files of the session at ``path``: a session file, a session folder ``<id>/``, or a
    project folder holding one session."""
    if path.is_dir():
        mains = session_files(path)
        if len(mains) == 1:
            return layout(mains[0])
        main = beside(path)
        subs = [subagent(p) for p in subagent_files(path)]
        if not subs and not main.is_file():
            raise ImporterError("not one Claude Code session: no session file or subagents here", path=path)
        return Layout(main if main.is_file() else None, subs)
    if is_subagent_file(path):
        return Layout(None, [subagent(path)])  # a subagent file alone is a session of its own
    found = subagent_files(path.with_suffix("")) + _old_layout_children(path)
    return Layout(path, [subagent(p) for p in found])
