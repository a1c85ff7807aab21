"""What a tool call acts on, read from its arguments: formats that log tool calls as a name and an
arguments object (Inspect, OpenTelemetry GenAI spans) name the target the same way."""

from __future__ import annotations

from typing import Any

TARGET_LIMIT = 300
"""Characters of a command kept as a row's target (the detail has all of it)."""
TARGET_KEYS = ("path", "file", "file_path", "filename", "cmd", "command", "url", "code", "query")
"""Arguments that name what a call acts on, most specific first."""


def short(value: str) -> str:
    """A target: the first line of a command or text, cut."""
    return value.split("\n", 1)[0][:TARGET_LIMIT]


def target_of(arguments: dict[str, Any]) -> str:
    """What a call acts on: a path, a command, a URL ... (``""``: the arguments do not say)."""
    for key in TARGET_KEYS:
        v = arguments.get(key)
        if isinstance(v, str) and v:
            return short(v)
    return ""
