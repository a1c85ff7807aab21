"""Importer for Claude Code sessions (``~/.claude/projects/<project>/<id>.jsonl``).

A session file brings its subagents (``<id>/subagents/agent-*.jsonl``) as child agents; its folder
``<id>/``, or a project folder holding one session, is the same session; a subagent file alone is a
session of its own; the web export ``{"loglines": [...]}`` is read too. See
``docs/formats/claude-code.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson
from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, head
from ..records import BOM
from ._details import details
from ._layout import beside, layout, session_files, subagent_files
from ._session import read_session, read_web
from ._vocab import NAME

_WEB = re.compile(rb'^\{\s*"loglines"\s*:\s*\[')
TURN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
"""Record types that carry the tree envelope (``uuid``, ``parentUuid``, ``sessionId``)."""
HEAD_LINES = 16


def record_score(rec: dict[str, object]) -> int:
    """How sure one record makes us: the tree envelope or a record type only Claude Code writes."""
    typ = rec.get("type")
    if not isinstance(typ, str):
        return NO
    if (
        typ in TURN_TYPES
        and "parentUuid" in rec
        and isinstance(rec.get("uuid"), str)
        and isinstance(rec.get("sessionId"), str)
    ):
        return CERTAIN
    if typ == "summary" and isinstance(rec.get("leafUuid"), str):
        return CERTAIN
    if typ == "file-history-snapshot" and isinstance(rec.get("snapshot"), dict):
        return CERTAIN
    if (
        typ == "queue-operation"
        and isinstance(rec.get("operation"), str)
        and isinstance(rec.get("sessionId"), str)
    ):
        return CERTAIN
    message = rec.get("message")
    if typ in ("user", "assistant") and isinstance(message, dict) and "role" in message:
        return LIKELY  # the web export's records: no tree envelope
    return NO


def file_score(data: bytes) -> int:
    start = data.removeprefix(BOM).lstrip()
    if _WEB.match(start):
        return CERTAIN
    best = NO
    for line in start.split(b"\n", HEAD_LINES)[:HEAD_LINES]:
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a line cut by the head's end, or a damaged one
        if isinstance(rec, dict):
            best = max(best, record_score(rec))
            if best == CERTAIN:
                return best
    if not best and all(k in start for k in (b'"parentUuid"', b'"sessionId"', b'"uuid"')):
        return LIKELY  # a first line longer than the head
    return best


class ClaudeCode:
    """Claude Code sessions (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head_bytes: bytes) -> int:
        if not path.is_dir():
            return file_score(head_bytes)
        mains = session_files(path)
        if len(mains) == 1:
            return CERTAIN if file_score(head(mains[0])) >= LIKELY else NO
        subs = subagent_files(path)
        main = beside(path)
        probe = main if main.is_file() else (subs[0] if subs else None)
        return CERTAIN if probe is not None and file_score(head(probe)) >= LIKELY else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        if path.is_file() and _WEB.match(head(path).removeprefix(BOM).lstrip()):
            yield from read_web(b, path)
        else:
            yield from read_session(b, layout(path))

    details = staticmethod(details)


IMPORTER = ClaudeCode()
