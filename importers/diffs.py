"""Unified diffs: a multi-file diff cut into per-file parts, the path a ``---``/``+++`` header
names, and the text of a file a diff creates (one rule for every importer that reads diffs)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class DiffFile:
    """One file's part of a unified diff (git's, or a plain ``---``/``+++`` one)."""

    path: str
    operation: str
    """``create``, ``update``, ``delete`` or ``move``."""
    patch: str
    """This file's lines of the diff, exactly as written."""
    moved_to: str | None = None

    @property
    def added_text(self) -> str | None:
        """The whole new file of a diff that creates it (its ``+`` lines), else None."""
        if self.operation != "create":
            return None
        lines = self.patch.splitlines(keepends=True)
        start = next((k for k, line in enumerate(lines) if line.startswith("@@")), len(lines))
        return added_text(lines[start:])


def added_text(hunks: list[str]) -> str:
    """The text the hunks of a diff that creates a file add: each ``+`` line without its ``+``,
    its line end as written; a ``\\ No newline at end of file`` at the end drops the last one's.

    ``hunks`` are the diff's lines from its first ``@@`` on (Codex reports a created file's diff
    as hunks alone)."""
    out = [line[1:] for line in hunks if line.startswith("+")]
    if out and hunks[-1].startswith("\\"):
        out[-1] = out[-1].rstrip("\r\n")
    return "".join(out)


def diff_path(given: str) -> str:
    """The path a ``---``/``+++`` header names (``a/``/``b/`` and a trailing time dropped; ``""``
    for ``/dev/null``)."""
    path = given.split("\t", 1)[0].strip()
    if path == "/dev/null" or not path:
        return ""
    return path[2:] if path.startswith(("a/", "b/")) else path


_GIT_DIFF = re.compile(r"diff --git a/(.*?) b/(.*?)\s*$")


def split_diff(text: str) -> list[DiffFile]:
    """The files a unified diff changes, in order, each with its own part of the text (a
    submission, a tool's diff output). Empty for text that is not a diff."""
    lines = text.splitlines(keepends=True)
    starts = [k for k, line in enumerate(lines) if line.startswith("diff --git ")]
    if not starts:
        starts = [
            k
            for k in range(len(lines) - 1)
            if lines[k].startswith("--- ") and lines[k + 1].startswith("+++ ")
        ]
    if not starts:
        return []
    ends = [*starts[1:], len(lines)]
    return [f for s, e in zip(starts, ends, strict=True) if (f := _diff_file(lines[s:e])) is not None]


def _diff_file(part: list[str]) -> DiffFile | None:
    old: str | None = None
    new: str | None = None
    op, moved = "update", None
    seen_old = seen_new = False
    for raw in part:
        line = raw.rstrip("\r\n")
        if line.startswith("@@"):
            break
        if line.startswith("new file mode"):
            op = "create"
        elif line.startswith("deleted file mode"):
            op = "delete"
        elif line.startswith("rename to "):
            moved = line[len("rename to ") :]
        elif line.startswith("--- ") and not seen_old:
            old, seen_old = diff_path(line[4:]) or None, True
        elif line.startswith("+++ ") and not seen_new:
            new, seen_new = diff_path(line[4:]) or None, True
    m = _GIT_DIFF.match(part[0].rstrip("\r\n"))
    if m is not None:
        old = old if seen_old else m.group(1)
        new = new if seen_new else m.group(2)
    if seen_old and old is None:
        op = "create"
    if seen_new and new is None:
        op = "delete"
    path = (old if op == "delete" else new) or old
    if not path:
        return None
    if moved and op == "update":
        return DiffFile(old or path, "move", "".join(part), moved)
    return DiffFile(path, op, "".join(part))
