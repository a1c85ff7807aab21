"""The agent sessions on this machine, where each agent keeps them, summarised cheaply.

Locations (each root honours the agent's documented override):

* Claude Code: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, then ``projects/<project>/<session>.jsonl``;
* Codex CLI: ``$CODEX_HOME`` or ``~/.codex``, then ``sessions/YYYY/MM/DD/rollout-*.jsonl`` (and
  ``archived_sessions/``); a subagent's rollout beside its parent's is part of the parent's session;
* Gemini CLI: ``$GEMINI_CLI_HOME`` (the folder that holds ``.gemini``) or ``~``, then
  ``.gemini/tmp/<project>/chats/session-*.jsonl`` (or the legacy ``.json``);
* Copilot CLI: ``$COPILOT_HOME`` or ``~/.copilot``, then ``session-state/<id>/events.jsonl`` (and the
  legacy ``history-session-state/*.json``);
* walkback: ``$WALKBACK_HOME`` or ``~/.walkback``, then ``runs/<run>/journal.jsonl``; the hook
  journals of hooked agent sessions are ``hooks/<agent>/<session>/journal.jsonl`` there, each listed
  with the agent's own transcript (one row per session, its ``journal`` set), or alone when the
  transcript is not where the agent keeps it.

A summary reads a file's head (workspace, task, start) and tail (last time, how it ended) and counts
its lines; it never parses the whole of a large file. The exact event count and the status the
importer gives (calls left open: ``crashed``) need a full read: :func:`counted`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import WalkbackError
from walkback.journal.hookpaths import AGENTS, HOOKS, safe_id
from walkback.journal.paths import JOURNAL_NAME
from walkback.journal.runlock import lock_is_held
from walkback.timeline.session import parse_time

from .codex._read import head as rollout_head
from .fields import mapping, string
from .records import BOM, written_lately

HEAD_BYTES = 1 << 18
"""Bytes read from a session's start for its workspace, task and start time."""
TAIL_BYTES = 1 << 16
"""Bytes read from a session's end for its last time and how it ended."""
DOCUMENT_LIMIT = 64 << 20
"""A single-document session larger than this is listed from its file alone (not parsed)."""
TASK_CHARS = 500


@dataclass(frozen=True)
class SessionInfo:
    """One session found on the machine (``walkback sessions --json`` prints these fields)."""

    agent: str
    """``claude-code``, ``codex``, ``gemini-cli``, ``copilot-cli`` or ``walkback``."""
    path: Path
    """What ``walkback view`` / ``show`` opens (a file, or a walkback run directory)."""
    workspace: str = ""
    """The project or working directory the session ran in, when its start says."""
    task: str = ""
    """The first prompt (or the run's task)."""
    start: float | None = None
    end: float | None = None
    """The last time the session wrote (its last record's time, else the file's)."""
    records: int = 0
    """Records in the file (lines, or messages of a single document): exact and cheap."""
    events: int | None = None
    """Events walkback shows for it: known only after a full read (:func:`counted`)."""
    status: str = "unknown"
    """``running``, ``completed``, ``cancelled``, ``crashed``, ``unknown`` (or ``unreadable``)."""
    journal: Path | None = None
    """The hook journal walkback wrote while the session ran (a hooked session), else None."""

    @property
    def duration(self) -> float | None:
        return self.end - self.start if self.start is not None and self.end is not None else None

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": str(self.path),
            "workspace": self.workspace,
            "task": self.task,
            "start": _iso(self.start),
            "end": _iso(self.end),
            "duration": round(self.duration, 3) if self.duration is not None else None,
            "records": self.records,
            "events": self.events,
            "status": self.status,
            "journal": str(self.journal) if self.journal is not None else None,
        }


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


# -- where the agents keep their sessions ---------------------------------------------------------
def roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> dict[str, Path]:
    """Each agent's folder on this machine, overrides first."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home

    def given(name: str, default: Path) -> Path:
        value = env.get(name, "")
        return Path(value).expanduser() if value.strip() else default

    return {
        "claude-code": given("CLAUDE_CONFIG_DIR", home / ".claude"),
        "codex": given("CODEX_HOME", home / ".codex"),
        "gemini-cli": given("GEMINI_CLI_HOME", home) / ".gemini",
        "copilot-cli": given("COPILOT_HOME", home / ".copilot"),
        "walkback": given("WALKBACK_HOME", home / ".walkback"),
    }


def _files(root: Path, *patterns: str) -> list[Path]:
    out: list[Path] = []
    for pattern in patterns:
        try:
            out += (p for p in root.glob(pattern) if p.is_file() and not p.is_symlink())
        except OSError:
            continue
    return out


def _codex_files(root: Path) -> list[Path]:
    """Rollouts, without the subagents' whose parent rollout lies beside them."""
    heads = [
        rollout_head(p)
        for p in _files(root, "sessions/*/*/*/rollout-*.jsonl", "archived_sessions/rollout-*.jsonl")
    ]
    threads = {(r.path.parent, r.thread) for r in heads}
    return [r.path for r in heads if not r.parent or (r.path.parent, r.parent) not in threads]


def _gemini_files(root: Path) -> list[Path]:
    """Chats; a legacy ``.json`` that the Gemini CLI migrated to ``.jsonl`` only once."""
    files = _files(root, "tmp/*/chats/session-*.jsonl", "tmp/*/chats/session-*.json")
    newer = {p.with_suffix("") for p in files if p.suffix == ".jsonl"}
    return [p for p in files if p.suffix == ".jsonl" or p.with_suffix("") not in newer]


PLACES: dict[str, Callable[[Path], list[Path]]] = {
    "claude-code": lambda root: _files(root, "projects/*/*.jsonl"),
    "codex": _codex_files,
    "gemini-cli": _gemini_files,
    "copilot-cli": lambda root: _files(root, "session-state/*/events.jsonl", "history-session-state/*.json"),
    "walkback": lambda root: [p.parent for p in _files(root, f"runs/*/{JOURNAL_NAME}")],
}
"""Agent -> the session files under its root."""


def find_sessions(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[SessionInfo]:
    """Every session found, summarised from its head and tail, newest first."""
    where = roots(env, home)
    out = [summarize(agent, p) for agent, root in where.items() for p in PLACES[agent](root)]
    out = with_hook_journals(out, where["walkback"] / HOOKS)
    return sorted(out, key=lambda s: -(s.start if s.start is not None else s.end or 0.0))


@dataclass(frozen=True)
class _HookJournal:
    agent: str
    session: str
    """The session's folder name (its sanitised id)."""
    journal: Path
    transcript: Path | None
    """The transcript the hook named, if it did."""


def _hook_journals(root: Path) -> list[_HookJournal]:
    """The hook journals under ``root`` (``<agent>/<session>/journal.jsonl``), from their headers."""
    found = []
    for agent in AGENTS:
        for journal in _files(root / agent, f"*/{JOURNAL_NAME}"):
            head = next(_records(journal, 0, HEAD_BYTES), {})
            named = string(mapping(head.get("hooked")).get("transcript"))
            found.append(_HookJournal(agent, journal.parent.name, journal, Path(named) if named else None))
    return found


def _ids(info: SessionInfo) -> set[str]:
    """Names a transcript's session id may have in its path: Claude's file stem, Copilot's folder,
    the UUID a Codex rollout's name ends with."""
    p = info.path
    return {safe_id(n) for n in (p.stem, p.parent.name, p.stem[-36:]) if n}


def with_hook_journals(found: list[SessionInfo], root: Path) -> list[SessionInfo]:
    """``found`` with each hook journal joined to its transcript's row (by the path the hook named,
    else by the session id in the transcript's path); a journal whose transcript is not listed gets
    a row of its own: the transcript it names when that exists, else the journal alone."""
    hooks = _hook_journals(root)
    if not hooks:
        return found
    by_path = {h.transcript.resolve(): h for h in hooks if h.transcript is not None}
    by_id = {(h.agent, h.session): h for h in hooks}
    used: set[Path] = set()
    out = []
    for info in found:
        hook = by_path.get(info.path.resolve()) if info.agent in AGENTS else None
        hook = hook or next((by_id[(info.agent, i)] for i in _ids(info) if (info.agent, i) in by_id), None)
        if hook is not None and hook.journal not in used:
            used.add(hook.journal)
            info = replace(info, journal=hook.journal)
        out.append(info)
    for hook in hooks:
        if hook.journal in used:
            continue
        if hook.transcript is not None and hook.transcript.is_file():
            out.append(replace(summarize(hook.agent, hook.transcript), journal=hook.journal))
        else:
            own = summarize("walkback", hook.journal.parent)
            out.append(replace(own, agent=hook.agent, journal=hook.journal))
    return out


def counted(info: SessionInfo) -> SessionInfo:
    """``info`` with the exact event count and the importer's status (a full read)."""
    from .registry import load

    try:
        session = load(info.path)
    except (WalkbackError, OSError, MemoryError, RecursionError):
        return replace(info, status="unreadable")
    return replace(info, events=len(session), status=session.status, task=info.task or session.task)


# -- one session's summary ------------------------------------------------------------------------
@dataclass
class _Facts:
    """What a head and a tail tell, filled record by record."""

    workspace: str = ""
    task: str = ""
    start: float | None = None
    end: float | None = None
    ended: str = ""
    done: bool = False
    """The head has said all it will."""


def summarize(agent: str, path: Path) -> SessionInfo:
    """A session's summary from its head and tail (see the module docstring)."""
    file = path / JOURNAL_NAME if path.is_dir() else path
    try:
        st = file.stat()
    except OSError:
        return SessionInfo(agent, path, status="unreadable")
    facts = _Facts()
    if file.suffix == ".json":
        records = _document(agent, file, st.st_size, facts)
    else:
        head = _HEADS[agent]
        for rec in _records(file, 0, HEAD_BYTES):
            head(rec, facts)
            if facts.done or facts.workspace and facts.task and facts.start is not None:
                break
        tail = list(_records(file, max(0, st.st_size - TAIL_BYTES), TAIL_BYTES))
        for rec in tail:
            _last_time(rec, facts)
        facts.ended = _ENDS.get(agent, _no_end)(tail, path)
        records = _lines(file)
    end = facts.end if facts.end is not None else st.st_mtime
    running = written_lately(file, facts.end) or agent == "walkback" and lock_is_held(path)
    status = "running" if running else facts.ended or "unknown"
    if agent == "gemini-cli" and not facts.workspace:
        facts.workspace = _gemini_project(file)
    return SessionInfo(
        agent, path, facts.workspace, facts.task[:TASK_CHARS], facts.start, end, records, None, status
    )


def _records(file: Path, offset: int, size: int) -> Iterator[dict[str, Any]]:
    """The JSON objects on the complete lines of ``size`` bytes from ``offset``."""
    try:
        with open(file, "rb") as f:
            f.seek(offset)
            data = f.read(size)
    except OSError:
        return
    if offset == 0:
        data = data.removeprefix(BOM)
    lines = data.split(b"\n")
    if offset > 0:
        lines = lines[1:]  # the first is cut
    for raw in lines if len(data) < size else lines[:-1]:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            yield rec


def _lines(file: Path) -> int:
    """Non-empty lines, counted a block at a time (never parsed)."""
    n = 0
    last = b"\n"
    try:
        with open(file, "rb") as f:
            while block := f.read(1 << 22):
                n += block.count(b"\n")
                last = block[-1:]
    except OSError:
        return 0
    return n + (last != b"\n")


def _when(value: Any) -> float | None:
    t = parse_time(value)
    return None if math.isnan(t) else t


def _last_time(rec: dict[str, Any], facts: _Facts) -> None:
    t = _when(rec.get("timestamp") or rec.get("ts") or mapping(rec.get("$set")).get("lastUpdated"))
    if t is not None:
        facts.end = t


def _first_time(rec: dict[str, Any], facts: _Facts, *keys: str) -> None:
    if facts.start is None:
        facts.start = next((t for k in keys if (t := _when(rec.get(k))) is not None), None)


def _prompt(text: str, facts: _Facts) -> None:
    """The task, from the first message a person wrote (an agent's own markup starts with ``<``)."""
    text = text.strip()
    if text and not facts.task and not text.startswith("<"):
        facts.task = text


def _prompts(content: Any, facts: _Facts) -> None:
    """The task from a message's content: a string, or its text blocks one by one."""
    if isinstance(content, str):
        _prompt(content, facts)
    elif isinstance(content, list):
        for c in content:
            if mapping(c).get("type") in (None, "text"):
                _prompt(string(mapping(c).get("text")), facts)


# -- what each format's head says -----------------------------------------------------------------
def _claude_head(rec: dict[str, Any], facts: _Facts) -> None:
    facts.workspace = facts.workspace or string(rec.get("cwd"))
    _first_time(rec, facts, "timestamp")
    if rec.get("type") == "user" and not rec.get("isMeta"):
        _prompts(mapping(rec.get("message")).get("content"), facts)


def _codex_head(rec: dict[str, Any], facts: _Facts) -> None:
    p = mapping(rec.get("payload"))
    if rec.get("type") == "session_meta":
        facts.workspace = facts.workspace or string(p.get("cwd"))
        _first_time(p, facts, "timestamp")
    _first_time(rec, facts, "timestamp")
    if p.get("type") == "user_message":
        _prompt(string(p.get("message")), facts)


def _gemini_head(rec: dict[str, Any], facts: _Facts) -> None:
    _first_time(rec, facts, "startTime", "timestamp")
    dirs = rec.get("directories")
    if isinstance(dirs, list) and dirs:
        facts.workspace = facts.workspace or string(dirs[0])
    if rec.get("type") == "user":
        _prompts(rec.get("content"), facts)


def _copilot_head(rec: dict[str, Any], facts: _Facts) -> None:
    data = mapping(rec.get("data"))
    _first_time(rec, facts, "timestamp")
    if rec.get("type") == "session.start":
        facts.workspace = facts.workspace or string(mapping(data.get("context")).get("cwd"))
    elif rec.get("type") == "user.message":
        _prompt(string(data.get("content")), facts)


def _walkback_head(rec: dict[str, Any], facts: _Facts) -> None:
    """Only the header says (a later record's ``task`` is a subagent's)."""
    _first_time(rec, facts, "ts")
    facts.workspace = string(rec.get("workspace"))
    facts.task = string(rec.get("task") or rec.get("task_id"))
    facts.done = True


_HEADS: dict[str, Callable[[dict[str, Any], _Facts], None]] = {
    "claude-code": _claude_head,
    "codex": _codex_head,
    "gemini-cli": _gemini_head,
    "copilot-cli": _copilot_head,
    "walkback": _walkback_head,
}


# -- how each format says it ended ----------------------------------------------------------------
def _no_end(tail: list[dict[str, Any]], path: Path) -> str:
    return ""


def _codex_end(tail: list[dict[str, Any]], path: Path) -> str:
    """How the last turn in the tail ended (``crashed``: it started and did not end)."""
    for rec in reversed(tail):
        typ = mapping(rec.get("payload")).get("type")
        if typ == "task_complete":
            return "completed"
        if typ == "turn_aborted":
            return "cancelled"
        if typ == "task_started":
            return "crashed"
    return ""


def _copilot_end(tail: list[dict[str, Any]], path: Path) -> str:
    return "completed" if any(r.get("type") == "session.shutdown" for r in tail) else ""


def _walkback_end(tail: list[dict[str, Any]], path: Path) -> str:
    """A v1 writer always ends a run with ``run.end``: without it, the run crashed."""
    last = tail[-1] if tail else {}
    if last.get("type") == "run.end":
        return string(last.get("status")) or "completed"
    return "crashed" if last.get("v") == 1 else ""


_ENDS: dict[str, Callable[[list[dict[str, Any]], Path], str]] = {
    "codex": _codex_end,
    "copilot-cli": _copilot_end,
    "walkback": _walkback_end,
}


def _document(agent: str, file: Path, size: int, facts: _Facts) -> int:
    """A single-document session (legacy Gemini and Copilot): parsed whole, unless huge."""
    if size > DOCUMENT_LIMIT:
        return 0
    try:
        doc = mapping(orjson.loads(file.read_bytes().removeprefix(BOM)))
    except (OSError, orjson.JSONDecodeError):
        return 0
    if agent == "gemini-cli":
        messages = doc.get("messages")
    else:  # Copilot's legacy session: its chat, or (when that is empty) its timeline
        messages = doc.get("chatMessages") or doc.get("timeline")
    items = [mapping(m) for m in messages] if isinstance(messages, list) else []
    facts.start = _when(doc.get("startTime"))
    facts.end = _when(doc.get("lastUpdated"))
    for m in items:
        if m.get("type") == "user" or m.get("role") == "user":
            _prompts(m.get("content", m.get("text")), facts)
        _last_time(m, facts)
    return len(items)


def _gemini_project(file: Path) -> str:
    """The project a Gemini chat belongs to: ``.project_root`` when the CLI wrote one, else the
    folder's name (a hash of the project path)."""
    folder = file.parent.parent
    try:
        return (folder / ".project_root").read_text(errors="replace").strip()[:1000]
    except OSError:
        return folder.name


__all__ = ["SessionInfo", "counted", "find_sessions", "roots", "summarize", "with_hook_journals"]
