"""Where the journal of a hooked agent session lives: ``$WALKBACK_HOME/hooks/<agent>/<session-id>/``.

The one rule both sides use: the hook command (:mod:`agent.hooks`) writes there, and the importers
find the journal of a transcript there (docs/hooks.md). Standard library only: the hook command
imports it on every tool call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

AGENTS = ("claude-code", "codex", "gemini-cli", "copilot-cli")
"""The agents whose sessions can be hooked (their importer's name is the folder under ``hooks/``)."""
HOOKS = "hooks"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def input_digest(args: object) -> str:
    """The first 16 hex digits of the sha256 of a tool input as compact JSON with sorted keys: what a
    synthesized call id (``<order>:<digest>``, for an agent whose payloads carry no id) ends with,
    and how a transcript's call is joined to it."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(args, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


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
