"""Claude Code's hook payloads (docs/hooks.md; checked against Claude Code 2.1.197).

Every payload has ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``; tool events
add ``tool_name``, ``tool_input`` and ``tool_use_id`` (the id of the transcript's tool_use block).
A PreToolUse hook that exits 2 blocks the call and shows its stderr to the model; a SessionStart
hook's ``hookSpecificOutput.additionalContext`` is added to the conversation.
"""

from __future__ import annotations

import json
from typing import Any

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
    SPAWN,
    SPAWN_END,
    START,
    Call,
    Expect,
    Hook,
    Outcome,
    PayloadError,
    Reply,
    Target,
    Unknown,
)

AGENT = "claude-code"
EVENTS = {
    "PreToolUse": PRE,
    "PostToolUse": POST,
    "PostToolUseFailure": FAIL,
    "SubagentStart": SPAWN,
    "SubagentStop": SPAWN_END,
    "PreCompact": COMPACT,
    "SessionStart": START,
    "UserPromptSubmit": PROMPT,
}
"""Claude Code's hook events -> what they mean (the rest: :data:`~agent.hooks.adapter.OTHER`)."""
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
SHELL_TOOLS = ("Bash",)
OUTPUT_TAIL = 2000
"""Characters of a command's output kept in its commit (the transcript has all of it)."""


def read(payload: dict[str, Any]) -> Hook:
    """The hook a Claude Code payload describes.

    Raises:
        PayloadError: a field the event needs is missing or of the wrong type.
    """
    name = payload.get("hook_event_name")
    session, cwd = payload.get("session_id"), payload.get("cwd")
    if not isinstance(name, str) or not isinstance(session, str) or not session or not isinstance(cwd, str):
        raise PayloadError("the payload lacks hook_event_name, session_id or cwd")
    event = EVENTS.get(name, OTHER)
    transcript = _text(payload.get("transcript_path"))
    hook = Hook(event, session, cwd, transcript)
    if event in (PRE, POST, FAIL):
        call = _call(payload)
        result = _result(payload.get("tool_response")) if event == POST and call.effect == COMMAND else None
        error = (_text(payload.get("error")) or "the tool call failed") if event == FAIL else None
        return hook._replace(call=call, result=result, error=error, agent=_text(payload.get("agent_id")))
    if event in (SPAWN, SPAWN_END):
        child = _text(payload.get("agent_id"))
        child_log = _text(payload.get("agent_transcript_path")) or _subagent_log(transcript, child)
        hook = hook._replace(child=child, child_transcript=child_log)
        if event == SPAWN:
            return hook._replace(text=_text(payload.get("agent_type")))
        last = _text(payload.get("last_assistant_message"))
        return hook._replace(text="completed", result={"last_message": last[-OUTPUT_TAIL:]} if last else None)
    if event == START:
        return hook._replace(text=_text(payload.get("source")) or "startup")
    if event == PROMPT:
        return hook._replace(text=_text(payload.get("prompt")) or "")
    if event == COMPACT:
        return hook._replace(text=_text(payload.get("trigger")))
    return hook


def reply(outcome: Outcome) -> Reply:
    """Exit 2 with the reason on stderr blocks a tool; added context is JSON on stdout."""
    if outcome.blocked:
        return Reply(stderr=outcome.blocked + "\n", code=2)
    if outcome.context:
        out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": outcome.context}}
        return Reply(stdout=json.dumps(out) + "\n")
    if outcome.warning:
        return Reply(stderr=outcome.warning + "\n", code=1)
    return Reply()


def _subagent_log(transcript: str | None, child: str | None) -> str | None:
    """Where Claude Code writes a subagent's transcript (SubagentStart does not say):
    ``<session transcript without .jsonl>/subagents/agent-<id>.jsonl``."""
    if transcript is None or child is None or not transcript.endswith(".jsonl"):
        return None
    return f"{transcript[: -len('.jsonl')]}/subagents/agent-{child}.jsonl"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _call(payload: dict[str, Any]) -> Call:
    tool, args, call_id = payload.get("tool_name"), payload.get("tool_input"), payload.get("tool_use_id")
    if not isinstance(tool, str) or not isinstance(args, dict):
        raise PayloadError("a tool event without tool_name or tool_input")
    call_id = call_id if isinstance(call_id, str) else ""
    if tool in SHELL_TOOLS:
        return Call(call_id, tool, COMMAND, args)
    if tool not in FILE_TOOLS:
        return Call(call_id, tool, READ, args)
    path = args.get("notebook_path" if tool == "NotebookEdit" else "file_path")
    if not isinstance(path, str) or not path:
        raise PayloadError(f"{tool} without a file path")
    return Call(call_id, tool, FS, args, (Target(path, _expect(tool, args)),))


def _expect(tool: str, args: dict[str, Any]) -> Expect | None:
    """How the tool's result follows from the file before it (None: a notebook's JSON is Claude's)."""
    if tool == "Write":
        content = args.get("content")
        return (lambda _pre: content.encode("utf-8")) if isinstance(content, str) else None
    if tool == "Edit":
        return lambda pre: edited(pre, [args])
    if tool == "MultiEdit":
        edits = args.get("edits")
        return (lambda pre: edited(pre, edits)) if isinstance(edits, list) else None
    return None


def edited(pre: bytes | None, edits: list[Any]) -> bytes:
    """The edits applied in order as Claude Code applies them (an empty ``old_string`` on a file
    that does not exist creates it); an edit that would fail makes the result :class:`Unknown`."""
    try:
        text = None if pre is None else pre.decode("utf-8")
    except UnicodeDecodeError:
        raise Unknown("the file is not UTF-8") from None
    for edit in edits:
        if not isinstance(edit, dict):
            raise Unknown("an edit that is not an object")
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise Unknown("an edit without old_string/new_string")
        if text is None:
            if old:
                raise Unknown("an edit of a file that does not exist")
            text = new
            continue
        count = text.count(old) if old else 0
        if count == 0 or (count > 1 and not edit.get("replace_all")):
            raise Unknown("old_string does not match exactly once")
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    if text is None:
        raise Unknown("no edit")
    return text.encode("utf-8")


def _result(response: Any) -> dict[str, Any]:
    """A Bash response's exit code (when it gives one) and the tail of its output."""
    if not isinstance(response, dict):
        return {"output_tail": str(response)[-OUTPUT_TAIL:]} if response is not None else {}
    out = "".join(str(response.get(k) or "") for k in ("stdout", "stderr"))
    result: dict[str, Any] = {"output_tail": out[-OUTPUT_TAIL:]}
    for key in ("exit_code", "exitCode", "returnCode"):
        if isinstance(response.get(key), int):
            result["exit_code"] = response[key]
            break
    if response.get("interrupted"):
        result["interrupted"] = True
    return result
