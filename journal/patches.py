"""Applying a recorded patch to a file's text, forward or in reverse, without guessing.

Agents record patches in several dialects of the unified diff: git's (``@@ -12,3 +12,4 @@``),
Aider's (``@@ ... @@``, no line numbers) and Codex's V4A (``@@ def f():`` context headers, ``***``
file lines). What they share is the hunk: context lines (`` ``), removed lines (``-``), added lines
(``+``). A hunk applies when its "before" lines (context and removed) are found in the text at or
after the previous hunk, nearest its line number when it has one; a hunk whose "before" lines are
found nowhere, or the same distance away in two places, does not apply. Postmortem uses this to
tell a patch that landed (it applies in reverse) from one that did not (it applies forward); the
hook command, to compute the file a Codex ``apply_patch`` will leave.
"""

from __future__ import annotations

import re

RANGE = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
SKIPPED = ("diff ", "index ", "***", "new file mode", "deleted file mode", "similarity ", "rename ")
NO_NEWLINE = "\\ No newline at end of file"


class Hunk:
    """One hunk: the lines before and after it (without line ends), and where it starts.

    A plain class, not a dataclass: the hook command imports this module on a tool call's path,
    where importing ``dataclasses`` alone costs a fifth of an interpreter start."""

    __slots__ = ("old", "new", "start", "new_start", "old_eof", "new_eof")

    def __init__(self) -> None:
        self.old: list[str] = []
        self.new: list[str] = []
        self.start: int | None = None  # 0-based line in the old text, when the header gives it
        self.new_start: int | None = None
        self.old_eof = False  # the old side's last line has no line end ("\\ No newline ...")
        self.new_eof = False


def hunks(patch: str) -> list[Hunk]:
    """The hunks of a one-file patch, in order (file headers and other lines skipped)."""
    out: list[Hunk] = []
    cur: Hunk | None = None
    last = ""
    for line in patch.splitlines():
        if line.startswith("@@"):
            cur = Hunk()
            m = RANGE.match(line)
            if m is not None:
                cur.start, cur.new_start = max(int(m.group(1)) - 1, 0), max(int(m.group(2)) - 1, 0)
            out.append(cur)
        elif line == NO_NEWLINE and cur is not None:
            cur.old_eof = cur.old_eof or last in "- "
            cur.new_eof = cur.new_eof or last in "+ "
        elif line.startswith(("--- ", "+++ ")) and cur is None:
            continue  # the file header (inside a hunk, ``--- x`` is the removed line ``-- x``)
        elif line.startswith(SKIPPED):
            continue
        elif line[:1] in (" ", "-", "+") or line == "":
            if cur is None:  # V4A and hand-written patches may start without a header
                cur = Hunk()
                out.append(cur)
            tag, body = (line[:1] or " "), line[1:]
            if tag in " -":
                cur.old.append(body)
            if tag in " +":
                cur.new.append(body)
            last = tag
    return [h for h in out if h.old or h.new]


def _find(lines: list[str], want: list[str], at: int, hint: int | None) -> int | None:
    """Where ``want`` occurs in ``lines`` at or after ``at``: the occurrence nearest ``hint``, or the
    only one; None when there is none, or two equally near."""
    if not want:
        return max(at, hint if hint is not None else at) if (hint or 0) <= len(lines) else None
    first = want[0]
    found = [
        k
        for k in range(at, len(lines) - len(want) + 1)
        if lines[k] == first and lines[k : k + len(want)] == want
    ]
    if not found:
        return None
    if hint is None:
        return found[0] if len(found) == 1 else None
    found.sort(key=lambda k: abs(k - hint))
    if len(found) > 1 and abs(found[0] - hint) == abs(found[1] - hint):
        return None
    return found[0]


def apply(text: str, patch: str, *, reverse: bool = False) -> str | None:
    """``text`` with ``patch`` applied (``reverse``: undone), or None when it does not apply."""
    parts = hunks(patch)
    if not parts:
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines()
    ends_open = bool(text) and not text.endswith(("\n", "\r"))
    out: list[str] = []
    at = 0
    for h in parts:
        before, after = (h.new, h.old) if reverse else (h.old, h.new)
        hint = h.new_start if reverse else h.start
        k = _find(lines, before, at, hint)
        if k is None:
            return None
        out += lines[at:k] + after
        at = k + len(before)
        if at == len(lines):
            ends_open = h.old_eof if reverse else h.new_eof
    out += lines[at:]
    if not out:
        return ""
    return newline.join(out) + ("" if ends_open else newline)


def applies(text: str, patch: str) -> tuple[bool, bool]:
    """``(forward, reverse)``: whether the patch applies to ``text``, and whether it unapplies."""
    return apply(text, patch) is not None, apply(text, patch, reverse=True) is not None
