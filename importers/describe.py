"""Saying what a file or a session is in one line: an unrecognised file in the reader's own words
(one clear error line), a task by its first line."""

from __future__ import annotations

import re
from pathlib import Path

from walkback.journal.scanresult import parse_line
from walkback.timeline.details import ModelResult, RunEnd
from walkback.timeline.session import Session

from .base import head
from .records import BOM

_TAG_ONLY = re.compile(r"</?[\w.:-]+>")
"""A line that only opens or closes a tag (``<pr_description>``, ``<task>``) says nothing yet."""
TOTALS = "model_stats"
"""The type of a ``model_result`` that totals a whole run (SWE-agent's and mini-swe-agent's
``info.model_stats``), its text saying how many API calls."""
MAX_DESCRIBED_LINE = 1 << 24
"""An unrecognised file's first line is parsed up to this many bytes to say what is wrong with it."""


def describe_unknown(path: Path) -> tuple[int, str]:
    """The first non-blank line's number and what it is."""
    start = head(path)
    if not start.strip():
        return 1, "empty file"
    if b"\x00" in start[:512] and start[:512].strip(b"\x00"):
        return 1, "binary data"
    with open(path, "rb") as f:
        for n, raw in enumerate(iter(lambda: f.readline(MAX_DESCRIBED_LINE), b""), 1):
            line = raw.rstrip(b"\r\n")
            if n == 1:
                line = line.removeprefix(BOM)
            if not line.strip():
                continue
            if line.lstrip()[:1] == b"[":
                return n, "a JSON array, not JSON lines"
            rec, why = parse_line(line)
            return n, why or "a JSON object of no known format"
    return 1, "no records"


def headline(text: str) -> str:
    """The first line of ``text`` that says something (a task's title), without its indentation.

    Agents keep a task as the user wrote it or as their template wrapped it, often pages of it; a
    summary line shows its start, past the lines that only open a tag.
    """
    for line in text.splitlines():
        if line.strip() and not _TAG_ONLY.fullmatch(line.strip()):
            return line.strip()
    return ""


def run_facts(session: Session) -> dict[str, str]:
    """How a session's run ended, in the source's words (``reason``: an exit status such as
    ``Submitted``), and what its model calls cost when the source totals them (``model``: a
    trajectory's ``model_stats``, its last ``model_result``). Each fact read from one event."""
    out: dict[str, str] = {}
    roots = {a.id for a in session.agents.values() if a.parent is None}
    ends = [i for i in session.indices_where(kind="run_end") if session.event(i).agent in roots]
    if ends:  # the session's own end, not a subagent's
        end = session.detail(ends[-1])
        if isinstance(end, RunEnd) and end.reason and end.reason.lower() != end.status.lower():
            out["reason"] = end.reason
    results = session.indices_where(kind="model_result")
    if results and session.event(results[-1]).type == TOTALS:
        totals = session.detail(results[-1])
        if isinstance(totals, ModelResult):
            cost = f"cost ${totals.cost:.4f}" if totals.cost is not None else ""
            out["model"] = ", ".join(p for p in (totals.text, cost) if p)
    return out
