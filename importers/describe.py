"""Saying what a file or a session is in one line: an unrecognised file in the reader's own words
(one clear error line), a task by its first line."""

from __future__ import annotations

import re
from pathlib import Path

from walkback.journal.scanresult import parse_line

from .base import head
from .records import BOM

_TAG_ONLY = re.compile(r"</?[\w.:-]+>")
"""A line that only opens or closes a tag (``<pr_description>``, ``<task>``) says nothing yet."""
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
