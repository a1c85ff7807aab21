"""Gemini CLI's hook payloads (docs/hooks.md; captured from Gemini CLI 0.61.0 run offline).

Every payload has ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and
``timestamp``; BeforeTool/AfterTool add ``tool_name`` and ``tool_input``, AfterTool
``tool_response`` (``llmContent``, ``returnDisplay``, and ``error`` when the tool failed). No call
id: the core synthesizes one and pairs the AfterTool with its BeforeTool by the tool input. Exit 2
with the reason on stderr blocks a tool; SessionStart's ``hookSpecificOutput.additionalContext``
is added to the conversation, as with Claude Code.
"""

from __future__ import annotations

import os
import re
from typing import Any

from . import claude_code
from .adapter import (
    COMMAND,
    COMPACT,
    FAIL,
    FS,
    OTHER,
    POST,
    PRE,
    PROMPT,
    READ,
    START,
    Call,
    Hook,
    Outcome,
    PayloadError,
    Reply,
    Target,
    Unknown,
)

AGENT = "gemini-cli"
EVENTS = {
    "BeforeTool": PRE,
    "AfterTool": POST,
    "SessionStart": START,
    "BeforeAgent": PROMPT,
    "PreCompress": COMPACT,
}
"""Gemini CLI's hook events -> what they mean (the rest: :data:`~agent.hooks.adapter.OTHER`)."""
SHELL_TOOLS = ("run_shell_command",)
OUTPUT_TAIL = claude_code.OUTPUT_TAIL
_EXIT = re.compile(r"^Exit Code: (-?\d+)$", re.M)


def read(payload: dict[str, Any]) -> Hook:
    """The hook a Gemini CLI payload describes.

    Raises:
        PayloadError: a field the event needs is missing or of the wrong type.
    """
    name, session, cwd = payload.get("hook_event_name"), payload.get("session_id"), payload.get("cwd")
    if not isinstance(name, str) or not isinstance(session, str) or not session or not isinstance(cwd, str):
        raise PayloadError("the payload lacks hook_event_name, session_id or cwd")
    event = EVENTS.get(name, OTHER)
    transcript = payload.get("transcript_path")
    hook = Hook(event, session, cwd, transcript if isinstance(transcript, str) and transcript else None)
    if event in (PRE, POST):
        call = _call(payload, cwd)
        response = payload.get("tool_response")
        error = response.get("error") if isinstance(response, dict) else None
        if event == POST and error is not None:
            why = error.get("message") if isinstance(error, dict) else error
            return hook._replace(event=FAIL, call=call, error=str(why or "the tool call failed"))
        result = _result(response) if event == POST and call.effect == COMMAND else None
        return hook._replace(call=call, result=result)
    if event == START:
        source = payload.get("source")
        return hook._replace(text=source if isinstance(source, str) and source else "startup")
    if event == PROMPT:
        prompt = payload.get("prompt")
        return hook._replace(text=prompt if isinstance(prompt, str) else "")
    return hook


def reply(outcome: Outcome) -> Reply:
    """Gemini CLI reads exit 2 (block, reason on stderr) and ``hookSpecificOutput`` as Claude Code."""
    return claude_code.reply(outcome)


def _call(payload: dict[str, Any], cwd: str) -> Call:
    tool, args = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(args, dict):
        raise PayloadError("a tool event without tool_name or tool_input")
    if tool in SHELL_TOOLS:
        where = args.get("dir_path")
        run_in = os.path.join(os.path.abspath(cwd), where) if isinstance(where, str) and where else None
        return Call("", tool, COMMAND, args, cwd=run_in)
    if tool not in ("write_file", "replace"):
        return Call("", tool, READ, args)
    path = args.get("file_path")
    if not isinstance(path, str) or not path:
        raise PayloadError(f"{tool} without a file_path")
    if tool == "write_file":
        content = args.get("content")
        data = content.encode("utf-8") if isinstance(content, str) else None
        expect = (lambda _pre: data) if data is not None else None
        return Call("", tool, FS, args, (Target(path, expect),))
    return Call("", tool, FS, args, (Target(path, lambda pre: replaced(pre, args)),))


def replaced(pre: bytes | None, args: dict[str, Any]) -> bytes:
    """``replace`` applied as Gemini CLI applies an exact match: ``old_string`` found once (every
    occurrence with ``allow_multiple``) in the LF-normalized text, the file's trailing newline and
    CRLF line ends kept; an empty ``old_string`` creates a file. A match Gemini would only find by
    its flexible or model-assisted fallbacks is :class:`Unknown`."""
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        raise Unknown("replace without old_string/new_string")
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if pre is None:
        if old:
            raise Unknown("a replace in a file that does not exist")
        return new.encode("utf-8")
    try:
        original = pre.decode("utf-8")
    except UnicodeDecodeError:
        raise Unknown("the file is not UTF-8") from None
    crlf = "\r\n" in original
    text = original.replace("\r\n", "\n")
    count = text.count(old) if old else 0
    if count == 0 or (count > 1 and not args.get("allow_multiple")):
        raise Unknown("old_string does not match exactly")
    out = text.replace(old, new)
    if text.endswith("\n") and not out.endswith("\n"):
        out += "\n"
    elif not text.endswith("\n") and out.endswith("\n"):
        out = out[:-1]
    return (out.replace("\n", "\r\n") if crlf else out).encode("utf-8")


def _result(response: Any) -> dict[str, Any]:
    """A shell call's output (``llmContent``) and the exit code Gemini states when it is not 0."""
    content = response.get("llmContent") if isinstance(response, dict) else response
    text = content if isinstance(content, str) else "" if content is None else str(content)
    result: dict[str, Any] = {"output_tail": text[-OUTPUT_TAIL:]}
    found = _EXIT.search(text)
    if found:
        result["exit_code"] = int(found.group(1))
    return result
