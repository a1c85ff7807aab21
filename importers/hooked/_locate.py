"""Where the hook journal of an agent session is: ``$WALKBACK_HOME/hooks/<agent>/<session-id>/``.

The hook command (docs/hooks.md) writes one walkback v1 journal per hooked session, named by the
agent and the agent's own session id, so the journal of a transcript is found from the transcript
alone: its format is the agent, its session id is what the importer read (the ``sessionId`` or
``id`` of its header, else the run it names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from walkback.journal.paths import JOURNAL_NAME
from walkback.timeline.session import Session

AGENTS = ("claude-code", "codex", "gemini-cli", "copilot-cli")
"""The formats whose sessions can be hooked (their importer's name is the folder under ``hooks/``)."""
HOOKS = "hooks"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
ID_KEYS = ("sessionId", "session_id", "id")
"""Header fields in which the importers keep the agent's session id."""


def hooks_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``$WALKBACK_HOME/hooks`` (default ``~/.walkback/hooks``)."""
    env = os.environ if env is None else env
    given = env.get("WALKBACK_HOME", "").strip()
    base = Path(given).expanduser() if given else (Path.home() if home is None else home) / ".walkback"
    return base / HOOKS


def safe_id(session_id: str) -> str:
    """The session id as a folder name: every character outside ``[A-Za-z0-9._-]`` becomes ``_``."""
    return _UNSAFE.sub("_", session_id)


def session_dir(agent: str, session_id: str, root: Path | None = None) -> Path | None:
    """The hook journal's folder for one session (None for an id that cannot name one)."""
    name = safe_id(session_id)
    if agent not in AGENTS or name in ("", ".", ".."):
        return None
    return (hooks_root() if root is None else root) / agent / name


def session_id(session: Session) -> str:
    """The agent's own id of ``session`` ("" when its importer read none)."""
    for key in ID_KEYS:
        value = session.header.get(key)
        if isinstance(value, str) and value:
            return value
    return session.runs[0] if session.runs else ""


def journal_for(session: Session, root: Path | None = None) -> Path | None:
    """The hook journal of ``session`` if one was written (a non-empty file), else None."""
    if session.format not in AGENTS:
        return None
    folder = session_dir(session.format, session_id(session), root)
    if folder is None:
        return None
    path = folder / JOURNAL_NAME
    try:
        return path if path.is_file() and path.stat().st_size > 0 else None
    except OSError:
        return None
