"""Claude Code's words in timeline terms: which tools change files or start subagents, what a
refusal says, what a call acts on. The reader and the details both ask here, so they agree."""

from __future__ import annotations

from typing import Any

from ..fields import relative

NAME = "claude-code"
ROOT_AGENT = "main"
FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
"""Tools whose call changes the file named by its ``file_path`` (or ``notebook_path``)."""
SPAWN_TOOLS = frozenset({"Task", "Agent"})
"""Tools that start a subagent (``Task``; newer builds call it ``Agent``)."""
CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
TARGET_LIMIT = 200
"""Characters of a command or pattern kept as an event's target (the detail has all of it)."""
TARGET_KEYS = ("command", "url", "pattern", "query", "path", "description", "prompt", "skill")
"""Arguments that say what a call acts on, in order of preference, after a file path."""

REJECTED = "User rejected tool use"
"""The ``toolUseResult`` Claude Code writes when the person refuses a call."""
REFUSALS = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
)
"""How a refused call's result text starts (the person said no in the permission dialog)."""
POLICY_DENIALS = (
    ("Permission to use ", "has been denied"),
    ("requested permissions to use ", "haven't granted"),
)
"""``(starts or contains, contains)`` pairs of a call denied by the permission settings."""
INTERRUPTED = "[Request interrupted by user"
HARNESS_TEXT = ("<", "Caveat:", INTERRUPTED)
"""User text Claude Code writes itself (command wrappers, reminders, caveats): never the task."""
COMPACT_SUBTYPES = frozenset({"compact_boundary", "microcompact_boundary"})
TURN_END_SUBTYPES = frozenset({"turn_duration", "stop_hook_summary"})
"""System records written when a turn has finished."""


def short(value: str) -> str:
    return value if len(value) <= TARGET_LIMIT else value[: TARGET_LIMIT - 1] + "…"


def target_of(name: str, args: Any, cwd: str) -> str:
    """What a call acts on: its file (relative to the workspace), else its command, URL, pattern."""
    if not isinstance(args, dict):
        return ""
    path = args.get("file_path") or args.get("notebook_path")
    if isinstance(path, str) and path:
        return relative(path, cwd)
    for key in TARGET_KEYS:
        v = args.get(key)
        if isinstance(v, str) and v:
            return short(v)
    return ""


def refusal(result: Any, text: str) -> str:
    """Who refused a call whose result is an error: ``user``, ``policy``, or ``""`` (not a refusal)."""
    if result == REJECTED or text.startswith(REFUSALS):
        return "user"
    for first, then in POLICY_DENIALS:
        if first in text[:300] and then in text[:300]:
            return "policy"
    return ""


def result_text(content: Any) -> str:
    """A tool result's content as text: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for c in content:
            if isinstance(c, dict):
                t = c.get("text")
                parts.append(t if isinstance(t, str) else f"[{c.get('type')}]")
            elif isinstance(c, str):
                parts.append(c)
        return "\n".join(parts)
    return ""


def prompt_of(content: Any) -> str:
    """The person's words in a user message (Claude Code's own wrappers and reminders skipped)."""
    if isinstance(content, str):
        return "" if content.lstrip().startswith(HARNESS_TEXT) else content.strip()
    if isinstance(content, list):
        for c in content:
            if isinstance(c, dict) and c.get("type") == "text":
                t = c.get("text")
                if isinstance(t, str) and t.strip() and not t.lstrip().startswith(HARNESS_TEXT):
                    return t.strip()
    return ""
