"""Copilot CLI's hook payloads (docs/hooks.md; captured from Copilot CLI 1.0.102 run offline).

A ``.github/hooks/*.json`` with camelCase events (``preToolUse``, ``postToolUse``,
``postToolUseFailure``, ``sessionStart``, ``userPromptSubmitted``: what walkback installs) hands
the hook ``sessionId``, ``cwd``, ``timestamp`` (ms) and ``toolName``/``toolArgs``, plus
``toolResult`` {``resultType``, ``textResultForLlm``} after a tool or ``error`` when it failed; the
payload does not name its event, so it is told by those fields. The same config with PascalCase
events gets snake_case payloads that do name it (``hook_event_name``, ``session_id``,
``tool_name`` as Claude Code's ``Write``/``Edit``/``Bash``, ``tool_input``, ``tool_result``); both
are read. The payload names no transcript: Copilot's own log of the session is found by its
id. No call id: the core synthesizes one and pairs the post hook by the tool input.
A preToolUse hook denies the call with ``permissionDecision: "deny"`` on stdout, and Copilot also
denies it when the hook exits non-zero: so a warning exits 0. ``additionalContext`` on a
sessionStart hook's stdout goes into the conversation.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .adapter import (
    COMMAND,
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
)
from .claude_code import OUTPUT_TAIL, edited

AGENT = "copilot-cli"
PASCAL = {
    "PreToolUse": PRE,
    "PostToolUse": POST,
    "PostToolUseFailure": FAIL,
    "SessionStart": START,
    "UserPromptSubmit": PROMPT,
    "UserPromptSubmitted": PROMPT,
}
"""The PascalCase events (payloads with ``hook_event_name``) -> what they mean."""
CREATE, EDIT, SHELL, PATCH = ("create", "Write"), ("edit", "Edit"), ("bash", "Bash"), ("apply_patch",)
"""Tool names in camelCase payloads and their PascalCase (Claude Code) spellings."""
_EXIT = re.compile(r"completed with exit code (-?\d+)")


def read(payload: dict[str, Any]) -> Hook:
    """The hook a Copilot CLI payload (either form) describes.

    Raises:
        PayloadError: a field the event needs is missing or of the wrong type.
    """
    pascal = "hook_event_name" in payload
    session = payload.get("session_id" if pascal else "sessionId")
    cwd = payload.get("cwd")
    if not isinstance(session, str) or not session or not isinstance(cwd, str):
        raise PayloadError("the payload lacks its session id or cwd")
    hook = Hook(_event(payload, pascal), session, cwd, transcript(session))
    if hook.event in (PRE, POST, FAIL):
        tool = payload.get("tool_name" if pascal else "toolName")
        args = payload.get("tool_input" if pascal else "toolArgs")
        call = _call(tool, args, cwd)
        response = payload.get("tool_result" if pascal else "toolResult")
        if hook.event == FAIL:
            return hook._replace(call=call, error=_error(payload.get("error")))
        if hook.event == POST and isinstance(response, dict):
            kind = response.get("result_type" if pascal else "resultType")
            text = response.get("text_result_for_llm" if pascal else "textResultForLlm")
            text = text if isinstance(text, str) else ""
            if kind not in (None, "success"):
                return hook._replace(event=FAIL, call=call, error=text or f"the tool call ended {kind}")
            if call.effect == COMMAND:
                return hook._replace(call=call, result=_result(text))
        return hook._replace(call=call)
    if hook.event == START:
        source = payload.get("source")
        return hook._replace(text="resume" if source == "resume" else "startup")
    if hook.event == PROMPT:
        prompt = payload.get("prompt")
        return hook._replace(text=prompt if isinstance(prompt, str) else "")
    return hook


def reply(outcome: Outcome) -> Reply:
    """A block is a ``deny`` decision; added context is ``additionalContext``; a warning exits 0
    (any other exit of a preToolUse hook denies the call)."""
    if outcome.blocked:
        out = {"permissionDecision": "deny", "permissionDecisionReason": outcome.blocked}
        return Reply(stdout=json.dumps(out) + "\n", stderr=outcome.blocked + "\n")
    if outcome.context:
        return Reply(stdout=json.dumps({"additionalContext": outcome.context}) + "\n")
    if outcome.warning:
        return Reply(stderr=outcome.warning + "\n")
    return Reply()


def transcript(session: str) -> str | None:
    """Copilot's own log of the session: ``$COPILOT_HOME/session-state/<id>/events.jsonl`` (the
    hook inherits Copilot's environment; the file appears after the session's first hooks)."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", session) or session in (".", ".."):
        return None
    home = os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")
    return os.path.join(home, "session-state", session, "events.jsonl")


def _event(payload: dict[str, Any], pascal: bool) -> str:
    """The event: named by a PascalCase payload, else told by the fields a camelCase one has."""
    if pascal:
        return PASCAL.get(str(payload.get("hook_event_name")), OTHER)
    if "toolName" in payload:
        return FAIL if "error" in payload else POST if "toolResult" in payload else PRE
    if "initialPrompt" in payload or "source" in payload:
        return START
    return PROMPT if "prompt" in payload else OTHER


def _call(tool: Any, args: Any, cwd: str) -> Call:
    if not isinstance(tool, str) or not tool:
        raise PayloadError("a tool event without its tool name")
    if tool in PATCH and isinstance(args, str):  # the patch is the whole input (a freeform tool)
        from .codex import patch_call

        return patch_call(Call("", tool, FS, {"input": args}), args, os.path.abspath(cwd))
    if not isinstance(args, dict):
        raise PayloadError(f"{tool} without its arguments")
    if tool in SHELL:
        return Call("", tool, COMMAND, args)
    if tool not in CREATE + EDIT:
        return Call("", tool, READ, args)
    path = args.get("path")
    if not isinstance(path, str) or not path:
        raise PayloadError(f"{tool} without a path")
    if tool in CREATE:
        content = args.get("file_text")
        data = content.encode("utf-8") if isinstance(content, str) else None
        return Call("", tool, FS, args, (Target(path, (lambda _pre: data) if data is not None else None),))
    edit = {"old_string": args.get("old_str"), "new_string": args.get("new_str")}
    return Call("", tool, FS, args, (Target(path, lambda pre: edited(pre, [edit])),))


def _error(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("message")
    return str(value) if value else "the tool call failed"


def _result(text: str) -> dict[str, Any]:
    """A bash call's output and the exit code Copilot reports (``completed with exit code 3``)."""
    result: dict[str, Any] = {"output_tail": text[-OUTPUT_TAIL:]}
    found = _EXIT.search(text)
    if found:
        result["exit_code"] = int(found.group(1))
    return result
