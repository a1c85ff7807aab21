"""What both OpenHands layouts share: the agent, model responses counted once, command outcomes,
the file editor's arguments and the file changes and token usage their details describe."""

from __future__ import annotations

import ast
import re
from typing import Any

from walkback.timeline.details import ABSENT, FileEdit, ModelResult, Usage, text_hash

from ..fields import integer, mapping, string, usage

ROOT_AGENT = "main"
EDITOR_CALL = re.compile(r"file_editor\(\*\*(\{.*\})\)\)?\s*$", re.S)
"""V0's ``translated_ipython_code``: ``print(file_editor(**{...}))``, the editor's arguments."""
EDITOR_LIMIT = 1 << 20
"""Characters of translated code read for the editor's arguments (the raw record has all)."""
COMMAND = re.compile(r"""['"]command['"]\s*:\s*['"](\w+)['"]""")
WRITES = frozenset({"create", "str_replace", "insert", "undo_edit", "write"})
"""File editor commands that change the file (``view`` does not)."""


class ResponseSeen:
    """Model responses already counted: OpenHands repeats a response on every action it asked for
    (and V0 on their observations), so its usage is counted at its first appearance only."""

    def __init__(self) -> None:
        self.ids: set[str] = set()

    def first_id(self, rid: str) -> bool:
        if not rid or rid in self.ids:
            return False
        self.ids.add(rid)
        return True

    def first(self, meta: dict[str, Any]) -> bool:
        """A V0 ``tool_call_metadata`` carries a response not counted yet (with its usage)."""
        response = mapping(meta.get("model_response"))
        return isinstance(response.get("usage"), dict) and self.first_id(string(response.get("id")))


def exit_code(ev: dict[str, Any]) -> int | None:
    """A V0 observation's exit code (``extras.metadata.exit_code``); -1 (still running) is None."""
    extras = mapping(ev.get("extras"))
    code = integer(mapping(extras.get("metadata")).get("exit_code"))
    code = code if code is not None else integer(extras.get("exit_code"))
    return None if code == -1 else code


def exit_status(obs: str, ev: dict[str, Any]) -> str:
    """``ok`` or ``failed`` for a V0 observation (an error, ``success: false``, a non-zero exit)."""
    if obs == "error" or ev.get("success") is False:
        return "failed"
    return "failed" if exit_code(ev) not in (None, 0) else "ok"


def editor_args(args: dict[str, Any]) -> dict[str, Any]:
    """A V0 edit's editor arguments: ``args`` itself when it names the command, else the literal
    dict of its ``translated_ipython_code`` (older builds keep only that)."""
    if isinstance(args.get("command"), str) and args.get("command"):
        return args
    code = string(args.get("translated_ipython_code"))[:EDITOR_LIMIT]
    m = EDITOR_CALL.search(code)
    if m is None:
        return args
    try:
        found = ast.literal_eval(m.group(1))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return args
    return {**args, **found} if isinstance(found, dict) else args


def v0_command(args: dict[str, Any]) -> str:
    """The file editor command of a V0 edit (``create``, ``str_replace`` ... or ``""``), without
    evaluating its translated code."""
    given = args.get("command")
    if isinstance(given, str) and given:
        return given
    m = COMMAND.search(string(args.get("translated_ipython_code"))[:4096])
    return m.group(1) if m else ""


def editor_edit(path: str, args: dict[str, Any]) -> FileEdit:
    """The change a file editor call describes: a created file's text (and hash), the replaced
    strings, an inserted text."""
    command = string(args.get("command"))
    if command == "create":
        body = args.get("file_text")
        post = body if isinstance(body, str) else None
        return FileEdit(path=path, operation="create", pre=ABSENT, post=text_hash(post), post_text=post)
    old, new = args.get("old_str"), args.get("new_str")
    return FileEdit(
        path=path,
        old_string=old if isinstance(old, str) and command == "str_replace" else None,
        new_string=new if isinstance(new, str) else None,
    )


def observed_edit(path: str, seen: dict[str, Any], diff: str) -> FileEdit:
    """The change an editor's observation reports: the file before and after (hashed), its diff."""
    before, after = seen.get("old_content"), seen.get("new_content")
    new = seen.get("prev_exist") is False
    pre_text = before if isinstance(before, str) and not new else None
    post_text = after if isinstance(after, str) else None
    return FileEdit(
        path=path,
        operation="create" if new else "update",
        pre=ABSENT if new else text_hash(pre_text),
        post=text_hash(post_text),
        pre_text=pre_text,
        post_text=post_text,
        patch=diff if diff.startswith(("--- ", "diff ")) else None,
    )


def token_usage(u: dict[str, Any], model: str, response_id: str, **extra: Any) -> ModelResult:
    """A response's tokens (prompt tokens include the cache reads in both layouts' counts)."""
    cached = u.get("cache_read_tokens", u.get("cache_read_input_tokens"))
    if cached is None:
        cached = mapping(u.get("prompt_tokens_details")).get("cached_tokens")
    reasoning = u.get("reasoning_tokens", mapping(u.get("completion_tokens_details")).get("reasoning_tokens"))
    counts: Usage = usage(
        u.get("prompt_tokens"), cached, u.get("completion_tokens"), reasoning, u.get("total_tokens")
    )
    write = integer(u.get("cache_write_tokens", u.get("cache_creation_input_tokens")))
    return ModelResult(
        model=model,
        usage=counts.model_copy(update={"cache_write_tokens": write}),
        response_id=response_id,
        **extra,
    )
