"""Copilot CLI's tools as the timeline names them: what a call acts on, whether it changes a file,
and the file change its arguments describe. Both layouts (events.jsonl, the legacy JSON) call the
same tools."""

from __future__ import annotations

import re
from typing import Any

from walkback.timeline.details import ABSENT, FileEdit, text_hash

from ..fields import relative, string

PATH_ARGS = ("path", "file_path", "filePath", "filename")
TARGET_ARGS = (*PATH_ARGS, "command", "url", "pattern", "query", "intent")
TARGET_CHARS = 240
EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit"})
"""``str_replace_editor`` commands that change the file named by ``path``."""
_EXIT = re.compile(r"<exited with exit code (-?\d+)>\s*$")


def target(args: dict[str, Any], cwd: str) -> str:
    """What a call acts on: its file (relative to the session's folder), command, URL or query."""
    for key in TARGET_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value:
            first = value.strip().split("\n", 1)[0][:TARGET_CHARS]
            return relative(first, cwd) if key in PATH_ARGS else first
    return ""


def changes_file(name: str, args: dict[str, Any]) -> bool:
    """The call writes the file its ``path`` names (``edit``, ``create``, an editor write)."""
    if not any(isinstance(args.get(k), str) and args.get(k) for k in PATH_ARGS):
        return False
    if name in ("edit", "create", "write"):
        return True
    return name == "str_replace_editor" and string(args.get("command")) in EDITOR_WRITES


def file_edit(name: str, args: dict[str, Any], path: str) -> FileEdit:
    """The change a file-writing call's arguments describe (a created file's text and hash, the
    replaced strings)."""
    command = args.get("command") if name == "str_replace_editor" else name
    if command in ("create", "write"):
        text = args.get("file_text", args.get("content"))
        post = text if isinstance(text, str) else None
        return FileEdit(path=path, operation="create", pre=ABSENT, post=text_hash(post), post_text=post)
    old, new = args.get("old_str"), args.get("new_str")
    return FileEdit(
        path=path,
        old_string=old if isinstance(old, str) else None,
        new_string=new if isinstance(new, str) else None,
    )


def exit_code(output: str) -> int | None:
    """The exit code a shell tool's output ends with (``<exited with exit code N>``)."""
    m = _EXIT.search(output[-200:])
    return int(m.group(1)) if m else None


def result_text(result: Any) -> str:
    """A result's text: ``content`` (events.jsonl) or ``log`` (legacy), or the value itself."""
    if isinstance(result, dict):
        return string(result.get("content")) or string(result.get("log"))
    return string(result)
