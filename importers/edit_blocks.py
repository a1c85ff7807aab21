"""Edits written as text by a model: SEARCH/REPLACE blocks, whole files in fences, unified diffs.

Aider (``diff``, ``whole`` and ``udiff`` edit formats) and Cline (``replace_in_file``) both let the
model write its edits into its reply, so both importers read them here, the same way, when they read
a session and again when they build an event's detail. Markers are found by one regex over the
text, never line by line: a reply can hold thousands of lines of code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .diffs import diff_path

MARKER = re.compile(
    r"^(?:(?P<head>(?:<{5,9}|-{3,}) SEARCH>?)|(?P<div>={5,9})|(?P<tail>(?:>{5,9}|\+{3,}) REPLACE))[ \t]*\r?$",
    re.M,
)
"""Aider's ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` and Cline's ``------- SEARCH`` /
``=======`` / ``+++++++ REPLACE``."""
FENCE = re.compile(r"^(`{3,}|~{3,})([^\n`]*)\r?$", re.M)
ROO_LINE = re.compile(r"\A(?::(?:start|end)_line:\s*\d+[ \t]*\r?\n|-{3,}[ \t]*\r?\n)+")
"""Roo Code's ``:start_line:12`` and ``-------`` lines at the top of a SEARCH section."""
FENCE_OPENER = re.compile(r"(?:`{3,}|~{3,}|<(?:source|code|pre|codeblock|sourcecode)>)")
"""The fences Aider accepts around a block (it asks for backticks; models write the others too)."""
LOOKBACK = 3
"""Lines above a SEARCH marker where Aider looks for the file name (the fence line may come between)."""


@dataclass(frozen=True)
class Block:
    """One edit found in a text: the file it names, what it replaces, and where it lies."""

    path: str
    """The file, as the model wrote it (empty when the text names none: Cline's diffs)."""
    old: str | None
    """The text to find (a SEARCH section); None for a whole file or a patch."""
    new: str
    """The replacement, the whole file's new content, or the patch."""
    start: int
    """Offset of the block's first character in the text (its file name line, when it has one)."""
    end: int
    """Offset just after the block."""
    kind: str = "replace"
    """``replace`` (SEARCH/REPLACE), ``whole`` (a fenced file) or ``patch`` (a unified diff)."""


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end + 1


def strip_filename(line: str) -> str:
    """A file name as Aider reads one from the line above a block (``path:``, ``**path**``,
    `` `path` ``, or a fence's info string when it holds a path)."""
    name = line.strip()
    if name == "...":
        return ""
    opener = FENCE_OPENER.match(name)
    if opener is not None:
        candidate = name[opener.end() :].strip()
        return candidate if "." in candidate or "/" in candidate else ""
    return name.rstrip(":").lstrip("#").strip().strip("`").strip("*")


def _filename_above(text: str, head: int) -> tuple[str, int]:
    """The file name in the lines above the SEARCH marker at ``head``, and where its line starts."""
    pos = head
    for _ in range(LOOKBACK):
        if pos <= 0:
            break
        start = _line_start(text, pos - 1)
        line = text[start : pos - 1].rstrip("\r")
        name = strip_filename(line)
        if name and not name.startswith(("<", "=", ">")):
            return name, start
        if FENCE_OPENER.match(line.strip()) is None:
            break
        pos = start
    return "", head


def search_replace(text: str, *, filenames: bool = True) -> list[Block]:
    """Every complete SEARCH/REPLACE block of ``text``, in order.

    With ``filenames`` (Aider) each block's file is the name above it, or the previous block's; a
    block whose markers are out of order or unfinished is not an edit and is left out.
    """
    out: list[Block] = []
    path = ""
    state, head_at, head_end, div_start, div_end = 0, 0, 0, 0, 0
    for m in MARKER.finditer(text):
        if m.group("head"):
            state, head_at, head_end = 1, m.start(), _line_end(text, m.start())
        elif m.group("div") and state == 1:
            state, div_start, div_end = 2, m.start(), _line_end(text, m.start())
        elif m.group("tail") and state == 2:
            start = head_at
            if filenames:
                name, where = _filename_above(text, head_at)
                if name:
                    path, start = name, where
            old = ROO_LINE.sub("", text[head_end:div_start], count=1)
            out.append(Block(path, old, text[div_end : m.start()], start, _line_end(text, m.start())))
            state = 0
    return out


def whole_files(text: str) -> list[Block]:
    """Files written whole, each as a file name line and then a fence (Aider's ``whole`` format)."""
    out: list[Block] = []
    fences = list(FENCE.finditer(text))
    k = 0
    while k + 1 < len(fences):
        opening, closing = fences[k], fences[k + 1]
        if closing.group(2).strip() or closing.group(1)[0] != opening.group(1)[0]:
            k += 1  # not a closing fence: try it as an opening one
            continue
        above = opening.start() - 1  # the newline ending the line above the fence
        if above >= 0:
            name_at = _line_start(text, above)
            name = strip_filename(text[name_at:above].rstrip("\r"))
            if name and " " not in name and not name.endswith((".", ",", ":")):
                body = text[_line_end(text, opening.start()) : closing.start()]
                out.append(Block(name, None, body, name_at, _line_end(text, closing.start()), "whole"))
        k += 2
    return out


DIFF_FILE = re.compile(r"^--- (?P<old>[^\r\n]*)\r?\n\+\+\+ (?P<new>[^\r\n]*)\r?$", re.M)


def unified_diffs(text: str) -> list[Block]:
    """The file diffs inside ```diff fences (Aider's ``udiff`` format), one block per file."""
    out: list[Block] = []
    fences = list(FENCE.finditer(text))
    k = 0
    while k + 1 < len(fences):
        opening, closing = fences[k], fences[k + 1]
        if opening.group(2).strip() != "diff":
            k += 1
            continue
        out += file_diffs(text, _line_end(text, opening.start()), closing.start())
        k += 2
    return out


def file_diffs(text: str, start: int = 0, stop: int | None = None) -> list[Block]:
    """A diff cut at its ``---``/``+++`` headers: one block per file."""
    stop = len(text) if stop is None else stop
    heads = list(DIFF_FILE.finditer(text, start, stop))
    out: list[Block] = []
    for j, h in enumerate(heads):
        end = heads[j + 1].start() if j + 1 < len(heads) else stop
        path = diff_path(h.group("new")) or diff_path(h.group("old"))
        if path:
            out.append(Block(path, None, text[h.start() : end], h.start(), end, "patch"))
    return out
