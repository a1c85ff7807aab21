"""Which sessions paths name: folders of runs expanded into sessions, each with a stable id (what the
viewer serves, an export of a folder reads and the archive indexes)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from walkback.journal.errors import WalkbackError

from .base import MultiSession
from .registry import PART, split_part

Detect = Callable[[Path], Any]
"""``importers.detect``: the importer for a path, raising ``WalkbackError`` when none fits."""


def entry_id(path: Path) -> str:
    """A stable, URL-safe id from the resolved path (never the path itself in a URL)."""
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]


def label(p: Path) -> str:
    """What a person calls the session: its file, or its run dir for a journal."""
    return p.name if p.name != "journal.jsonl" else p.parent.name


def discover(
    paths: list[Path],
    detect: Detect,
    *,
    depth: int = 3,
    known: Callable[[Path], list[Path] | None] | None = None,
) -> list[Path]:
    """Expand folders of runs into their sessions; keep files and run dirs as given.

    A folder that is itself a session (a run dir) stays one session; any other folder contributes
    each child that ``detect`` accepts (run dirs, journal files, logs; a file holding several sessions,
    an Inspect log, as one ``file#part`` per session), and the sessions of its
    sub-folders down to ``depth`` levels (``walkback demo --dir D`` leaves its run in
    ``D/runs/demo``). Subagent dirs are never listed on their own: they belong to their parent's
    session; hidden folders, a run's own parts and git working trees (runs never live in one) are
    not searched. ``known`` may name the sessions a path is already known to hold (the archive's,
    unchanged since it indexed them): those are taken as they are, without asking ``detect``.
    """

    def sessions(p: Path) -> list[Path] | None:
        """The sessions ``p`` holds, or None when it is not one (nor a file of several)."""
        hit = known(p) if known is not None else None
        if hit is not None:
            return hit
        return _sessions(detect, p) if _accepts(detect, p) else None

    def below(folder: Path, levels: int) -> list[Path]:
        found: list[Path] = []
        try:
            children = sorted(folder.iterdir())
        except OSError:
            return found
        for child in children:
            if child.name.startswith(".") or child.name in ("agents", "blobs", "segments"):
                continue
            held = sessions(child)
            if held is not None:
                found += held
            elif levels > 1 and child.is_dir() and not child.is_symlink() and not (child / ".git").exists():
                found += below(child, levels - 1)
        return found

    out: list[Path] = []
    for p in paths:
        held = known(p) if known is not None else None
        if held is not None:
            out += held
        elif p.is_dir() and not _accepts(detect, p):
            out += below(p, depth)
        else:
            out += _sessions(detect, p)
    seen: set[Path] = set()
    return [p for p in out if not (p.resolve() in seen or seen.add(p.resolve()))]  # type: ignore[func-returns-value]


def _sessions(detect: Detect, p: Path) -> list[Path]:
    """``p``, or ``p#part`` for each session of a file that holds several (an Inspect log's samples);
    a ``file#part`` given by name is that one session."""
    if split_part(p)[1] is not None:
        return [p]
    try:
        imp = detect(p)
        parts = imp.parts(p) if isinstance(imp, MultiSession) else []
    except (WalkbackError, OSError):
        return [p]
    return [p.with_name(f"{p.name}{PART}{part}") for part in parts] or [p]


def _accepts(detect: Detect, p: Path) -> bool:
    try:
        detect(p)
    except (WalkbackError, OSError):
        return False
    return True
