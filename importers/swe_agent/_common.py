"""What SWE-agent's ``.traj`` and mini-swe-agent's ``.traj.json`` share: the final submission as
file changes, how a run ended, the tools its commands name."""

from __future__ import annotations

from typing import Any

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.kinds import FILE

from ..diffs import split_diff
from ..fields import string

ROOT_AGENT = "main"
SUBMIT = "submit"
TARGET_CHARS = 240
TOOLS = frozenset(
    {
        "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append", "find_file",
        "search_dir", "search_file", "submit", "str_replace_editor", "filemap", "view_image", "exit_forfeit",
        "exit_cost", "exit_context", "exit_format", "skip", "review_on_submit",
    }
)  # fmt: skip
"""SWE-agent's own commands (any other action is a shell command, tool ``bash``)."""


def command_tool(action: str) -> str:
    """The tool an action line runs: a SWE-agent command by its name, else ``bash``."""
    first = action.strip().split(None, 1)[0] if action.strip() else ""
    return first if first in TOOLS else "bash"


def command_target(action: str) -> str:
    """What an action acts on, for lists: its first line."""
    return action.strip().split("\n", 1)[0][:TARGET_CHARS]


def end_status(exit_status: str) -> str:
    """A run's end from its ``exit_status``: submitted (even on a limit) is ``completed``."""
    word = exit_status.lower()
    if not word:
        return "unknown"
    if word.startswith("submitted"):
        return "completed"
    return "cancelled" if "forfeit" in word or "interrupt" in word else "failed"


def submission_calls(b: SessionBuilder, info: dict[str, Any], *, src: int, agent: str) -> int:
    """One file-changing ``tool_call`` per file of ``info.submission`` (``sub`` = its place in the
    diff), done at once: the diff is the run's final change. Returns how many."""
    files = split_diff(string(info.get("submission")))
    for k, f in enumerate(files):
        b.add(
            "tool_call",
            type="submission",
            agent=agent,
            tool=SUBMIT,
            target=f.path,
            status="ok",
            src=src,
            offset=-1,
            sub=k,
            flags=FILE,
        )
    return len(files)
