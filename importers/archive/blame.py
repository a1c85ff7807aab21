"""``walkback blame FILE``: each line of a file as it is now, put down to the recorded change that
wrote it, newest change first (docs/archive.md).

A change "wrote" a line when the text it put in the file (a Write's content, an Edit's
replacement, a patch's added lines) holds that line where the file now holds it: the change's
lines are matched to the file's as blocks (difflib's longest matching blocks), so a line written
once and moved or reindented since is not claimed by accident, and a newer change wins over an
older one for the lines both wrote. When the file's hash is a change's post hash, changes after
that one left the file as it was, and are not asked. Lines no change explains are not from a
recorded session.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path, PurePosixPath
from typing import Any

from .store import Archive


@dataclass
class Range:
    """Lines ``first``..``last`` (1-based, inclusive) and the change that wrote them (None: none)."""

    first: int
    last: int
    change: dict[str, Any] | None
    session: dict[str, Any] | None

    def as_json(self) -> dict[str, Any]:
        ch, s = self.change, self.session
        return {
            "lines": [self.first, self.last],
            "session": ch["session"] if ch else None,
            "step": ch["step"] if ch else None,
            "agent": ch["agent"] if ch else None,
            "tool": ch["tool"] if ch else None,
            "time": _iso(ch["ts"]) if ch else None,
            "approval": (ch["approval"] or None) if ch else None,
            "source": s["path"] if s else None,
            "format": s["format"] if s else None,
            "post": ch["post"] if ch else None,
        }


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _same_file(change_path: str, file: Path) -> bool:
    """Whether a change recorded as ``change_path`` (relative to its workspace, or absolute) is of
    ``file``: the same absolute path, or the file's path ending with the relative one."""
    p = PurePosixPath(change_path)
    if p.is_absolute():
        return str(p) == file.as_posix()
    return file.as_posix().endswith("/" + str(p).removeprefix("./"))


def blame(archive: Archive, file: Path) -> list[Range]:
    """The file's lines in ranges, each with the newest recorded change that wrote it."""
    file = file.resolve()
    data = file.read_bytes()
    lines = data.decode("utf-8", "replace").splitlines()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    changes = [c for c in archive.changes_named(file.name) if _same_file(c["path"], file)]
    for n in range(len(changes) - 1, -1, -1):  # the newest change that left the file as it is
        if changes[n]["post"] == digest:
            changes = changes[: n + 1]
            break
    owner: list[dict[str, Any] | None] = [None] * len(lines)
    left = len(lines)
    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(lines)  # the file's lines are indexed once for every change
    for change in reversed(changes):
        if not left:
            break
        wrote = (change["written"] or "").splitlines()
        if not any(w.strip() for w in wrote):
            continue
        matcher.set_seq1(wrote)
        for block in matcher.get_matching_blocks():
            for j in range(block.b, block.b + block.size):
                if owner[j] is None and lines[j].strip():
                    owner[j] = change
                    left -= 1
    _fill_blanks(owner, lines)
    sessions = {sid: archive.session(sid) for sid in {c["session"] for c in changes}}
    out: list[Range] = []
    for j, ch in enumerate(owner):
        if out and out[-1].change is ch:
            out[-1].last = j + 1
        else:
            out.append(Range(j + 1, j + 1, ch, sessions.get(ch["session"]) if ch else None))
    return out


def _fill_blanks(owner: list[dict[str, Any] | None], lines: list[str]) -> None:
    """A blank line between two lines of one change is that change's (blank lines match anywhere,
    so they are never matched on their own)."""
    before: dict[str, Any] | None = None
    j = 0
    while j < len(lines):
        if lines[j].strip():
            before = owner[j]
            j += 1
            continue
        end = j
        while end < len(lines) and not lines[end].strip():
            end += 1
        if end < len(lines) and before is not None and owner[end] is before:
            owner[j:end] = [before] * (end - j)
        j = end


def agent_trace(file: Path, ranges: list[Range], root: Path | None = None) -> dict[str, Any]:
    """The ranges as one Agent Trace record (v0.1.0: files -> conversations -> ranges, each range
    with the hash of its content); walkback's own facts under ``metadata["dev.walkback"]``."""
    file = file.resolve()
    lines = file.read_bytes().decode("utf-8", "replace").splitlines()
    rel = file.relative_to(root.resolve()).as_posix() if root else file.name
    conversations: dict[str, dict[str, Any]] = {}
    for r in ranges:
        if r.change is None:
            continue
        sid = r.change["session"]
        conv = conversations.setdefault(
            sid,
            {
                "url": Path(r.session["path"]).resolve().as_uri() if r.session else None,
                "contributor": {"type": "ai", "model_id": _model(r.session)},
                "ranges": [],
            },
        )
        text = "\n".join(lines[r.first - 1 : r.last])
        conv["ranges"].append(
            {
                "start_line": r.first,
                "end_line": r.last,
                "content_hash": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
                "metadata": {"dev.walkback": {k: v for k, v in r.as_json().items() if k != "lines"}},
            }
        )
    content = file.read_bytes()
    return {
        "version": "0.1.0",
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, file.as_uri() + "#" + hashlib.sha256(content).hexdigest())),
        "tool": {"name": "walkback"},
        "files": [{"path": rel, "conversations": list(conversations.values())}],
    }


def _model(session: dict[str, Any] | None) -> str | None:
    models = (session or {}).get("models") or ""
    return models.split(",")[0] or None
