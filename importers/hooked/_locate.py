"""Where the hook journal of an agent session is: ``$WALKBACK_HOME/hooks/<agent>/<session-id>/``.

The hook command (docs/hooks.md) writes one walkback v1 journal per hooked session, named by the
agent and the agent's own session id, so the journal of a transcript is found from the transcript
alone: its format is the agent, its session id is what the importer read (the ``sessionId`` or
``id`` of its header, else the run it names).
"""

from __future__ import annotations

from pathlib import Path

from walkback.journal.hookpaths import AGENTS, session_dir
from walkback.journal.paths import JOURNAL_NAME
from walkback.timeline.session import Session

ID_KEYS = ("sessionId", "session_id", "id")
"""Header fields in which the importers keep the agent's session id."""


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
