"""Codex's patch texts: the V4A ``apply_patch`` envelope read into per-file changes (the unified
diffs ``patch_apply_end`` reports are read by :mod:`walkback.importers.diffs`). Here, below the
importers, because the hook command (agent/hooks/codex.py) computes a patch's result from it too.

V4A (``*** Begin Patch`` … ``*** End Patch``) names each file once, with ``Add File`` (every
line ``+``), ``Delete File`` or ``Update File`` (optionally ``Move to``) and ``@@`` hunks of
context, ``-`` and ``+`` lines without line numbers. Codex also accepts the envelope given to a
shell (``apply_patch <<'EOF' … EOF``), which it intercepts and applies itself; such a command is
a file change as well.
"""

from __future__ import annotations

from typing import NamedTuple

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_OPS = (("*** Add File: ", "create"), ("*** Delete File: ", "delete"), ("*** Update File: ", "update"))
_MOVE = "*** Move to: "
_SHELL_NAMES = ("apply_patch", "applypatch")


class PatchFile(NamedTuple):
    """One file of a V4A patch."""

    path: str
    operation: str
    """``create``, ``update``, ``delete`` or ``move`` (an update with ``Move to``)."""
    body: str
    """The file's own lines of the patch: ``+`` lines of an added file, the hunks of an update."""
    moved_to: str | None = None

    @property
    def added_text(self) -> str | None:
        """The whole new file of an ``Add File`` (each ``+`` line with its newline), else None."""
        if self.operation != "create":
            return None
        return "".join(line[1:] + "\n" for line in self.body.splitlines() if line.startswith("+"))


def parse_v4a(text: str) -> list[PatchFile]:
    """The files a V4A patch changes, in order (empty for text that is not one)."""
    start = text.find(BEGIN)
    if start < 0:
        return []
    end = text.find(END, start)
    lines = text[start + len(BEGIN) : end if end >= 0 else len(text)].splitlines()
    out: list[PatchFile] = []
    path, op = "", ""
    moved: str | None = None
    body: list[str] = []

    def close() -> None:
        if path:
            out.append(PatchFile(path, "move" if moved else op, "\n".join(body), moved))

    for line in lines:
        header = next(((line[len(p) :].strip(), o) for p, o in _OPS if line.startswith(p)), None)
        if header is not None:
            close()
            (path, op), moved, body = header, None, []
        elif line.startswith(_MOVE) and path:
            moved = line[len(_MOVE) :].strip() or None
        elif path and line != "*** End of File":
            body.append(line)
    close()
    return out


def shell_patch(command: str) -> str | None:
    """The V4A text of a shell command that hands a patch to ``apply_patch`` (None otherwise)."""
    start = command.find(BEGIN)
    if start < 0 or not any(name in command[:start] for name in _SHELL_NAMES):
        return None
    end = command.find(END, start)
    return command[start : end + len(END)] if end >= 0 else command[start:]
