"""What an Inspect tool call acts on and which file it changes, from its function and arguments.

The reader (the row's ``target`` and ``FILE`` flag) and the details (the ``FileEdit``) both ask
here, so the two always agree.
"""

from __future__ import annotations

from typing import Any

from walkback.timeline.details import FileEdit, text_hash

from ..fields import string

EDITORS = frozenset(
    {"text_editor", "str_replace_editor", "str_replace_based_edit_tool", "edit_file", "editor"}
)
"""Tools taking a ``command`` (``create``, ``str_replace``, ``insert`` ...) and a ``path``."""
WRITERS = frozenset({"write_file", "create_file", "write", "save_file"})
"""Tools that write a whole file: a path and its new text."""
EDITING = frozenset({"create", "str_replace", "insert", "undo_edit", "write", "append"})
TRUNCATED = "\n\nOutput truncated ("
"""How Inspect marks content it cut to 20 lines in a sandbox event (the text is then not the file)."""


def changed_file(function: str, arguments: dict[str, Any]) -> str:
    """The file a call changes (``""``: it changes none that the arguments say)."""
    path = string(arguments.get("path") or arguments.get("file") or arguments.get("file_path"))
    if not path:
        return ""
    if function in EDITORS:
        return path if arguments.get("command") in EDITING else ""
    return path if function in WRITERS else ""


def file_edit(function: str, arguments: dict[str, Any]) -> FileEdit | None:
    """What the arguments say about the change :func:`changed_file` names."""
    path = changed_file(function, arguments)
    if not path:
        return None
    command = arguments.get("command")
    if function in WRITERS or command in ("create", "write"):
        text = arguments.get("file_text", arguments.get("content", arguments.get("text")))
        if isinstance(text, str):
            op = "create" if command == "create" else "update"
            return FileEdit(path=path, operation=op, post_text=text, post=text_hash(text))
        return FileEdit(path=path, operation="create" if command == "create" else "update")
    if command == "str_replace":
        return FileEdit(
            path=path,
            old_string=string(arguments.get("old_str")),
            new_string=string(arguments.get("new_str")),
        )
    if command in ("insert", "append"):
        return FileEdit(path=path, new_string=string(arguments.get("new_str", arguments.get("text"))))
    return FileEdit(path=path)


def sandbox_written(event: dict[str, Any]) -> FileEdit | None:
    """The file a sandbox ``write_file`` event wrote, with its text when the event has all of it."""
    path = string(event.get("file"))
    if not path:
        return None
    text = event.get("input")
    whole = isinstance(text, str) and TRUNCATED not in text and not text.startswith("binary (")
    if whole and isinstance(text, str):
        return FileEdit(path=path, post_text=text, post=text_hash(text))
    return FileEdit(path=path)
