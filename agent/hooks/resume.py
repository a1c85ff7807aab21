"""Session start: recover what a crash left unfinished and hand the agent the resume brief.

On ``SessionStart`` with source ``resume``, the session's own journal is recovered as ``walkback
recover --apply`` recovers it (:func:`journal.recovery.recover`: applied intents committed, not
applied ones redone, torn files restored from the pre-image and redone, commands in doubt left to a
human; every decision journaled first). With any source, the journals of other sessions of this
agent in the same workspace that have unfinished intents (a crashed session the user starts afresh
instead of resuming) are analyzed. The briefs become the agent's added context.
"""

from __future__ import annotations

import json
from pathlib import Path

from walkback.journal.hookpaths import session_dir
from walkback.journal.paths import JOURNAL_NAME

from .adapter import Hook

RESUMED = "resume"


def briefs(agent: str, hook: Hook) -> str | None:
    """The resume briefs of the journals this session start looks at (None: nothing unfinished).

    The session's own journal (on resume) is recovered with ``--apply``: it is not running
    elsewhere. Another session's is only analyzed: it may still be running (an intent waits while
    its tool is held by a hook or a permission prompt), so the brief says how to apply it.
    """
    from walkback.journal.recovery import analyze, recover

    own = session_dir(agent, hook.session)
    texts = []
    for path in _candidates(agent, hook, own):
        plan = analyze(path)
        if not any(not f.done for f in plan.all_findings()):
            continue
        if own is not None and path.parent == own:
            texts.append(f"walkback recovered this session ({path}):\n{recover(path, apply=True).brief}")
        else:
            act = f"`walkback recover {path} --apply` acts"
            texts.append(
                f"walkback found session {path.parent.name} of this workspace unfinished ({path}); nothing"
                f" was changed (it may still be running; {act}):\n{plan.brief}"
            )
    return "\n\n".join(texts) or None


def _candidates(agent: str, hook: Hook, own: Path | None) -> list[Path]:
    """The session's journal (on resume), then other journals of this workspace, newest first."""
    found = []
    if own is not None and hook.text == RESUMED and (own / JOURNAL_NAME).is_file():
        found.append(own / JOURNAL_NAME)
    if own is None:
        return found
    workspace = str(Path(hook.workspace).resolve())
    others = sorted(own.parent.glob(f"*/{JOURNAL_NAME}"), key=_mtime, reverse=True)
    for path in others:
        if path.parent != own and _workspace(path) == workspace:
            found.append(path)
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _workspace(path: Path) -> str | None:
    """The workspace a hook journal's header names (None when the header cannot be read)."""
    try:
        with open(path, "rb") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        return None
    ws = header.get("workspace") if isinstance(header, dict) else None
    return str(Path(ws).resolve()) if isinstance(ws, str) else None
