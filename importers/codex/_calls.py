"""What a Codex tool call does, read once from its record: the command, the files it changes, the
escalation it asks for. The reader needs it for the row (target, file flag, approval) and the
details for the content, so both call :func:`interpret`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from walkback.journal.v4a import PatchFile, parse_v4a, shell_patch

from ..fields import embedded_json, mapping, relative, string

TARGET_CHARS = 240
"""A command is cut to this many characters (its first line) as an event's target."""
SHELLS = frozenset({"shell", "container.exec", "local_shell", "shell_command"})
"""Tools whose ``command`` argument is an argv list."""


@dataclass
class Call:
    """One tool call as Codex recorded it."""

    name: str
    call_id: str
    arguments: dict[str, Any] | str
    command: str | None = None
    url: str | None = None
    files: list[PatchFile] = field(default_factory=list)
    """The files a patch changes (apply_patch, or a shell command that runs it)."""
    escalation: str | None = None
    """The justification of a request to run outside the sandbox (None: no request)."""
    plain_target: str = ""
    """What the call acts on when it changes no file (a command, a query, a path it reads)."""

    def target(self, k: int, cwd: str) -> str:
        """The target of the call's ``k``-th event (one per changed file; 0 when it changes none)."""
        if self.files:
            return relative(self.files[k].path, cwd)
        return self.plain_target


def argv(value: Any) -> str | None:
    """A command given as an argv list (``["bash", "-lc", script]`` is its script) or a string."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        return None
    if len(value) == 3 and value[1] in ("-lc", "-c"):
        return value[2]
    return shlex.join(value)


def short(command: str) -> str:
    """A command as a target: its first line, cut."""
    return command.strip().split("\n", 1)[0][:TARGET_CHARS]


def interpret(payload: dict[str, Any]) -> Call:
    """The call a ``function_call``, ``custom_tool_call`` or ``local_shell_call`` payload makes."""
    kind = payload.get("type")
    call_id = string(payload.get("call_id")) or string(payload.get("id"))
    if kind == "local_shell_call":
        action = mapping(payload.get("action"))
        call = Call("local_shell", call_id, action)
        call.command = argv(action.get("command"))
    elif kind == "custom_tool_call":
        raw = string(payload.get("input"))
        call = Call(string(payload.get("name")) or "?", call_id, {"input": raw})
        if call.name == "apply_patch":
            call.files = parse_v4a(raw)
    else:
        raw_args = payload.get("arguments")
        parsed = embedded_json(raw_args)
        args = parsed if isinstance(parsed, dict) else {}
        call = Call(string(payload.get("name")) or "?", call_id, args or string(raw_args))
        _function(call, args)
    if call.command is not None:
        patch = shell_patch(call.command)
        call.files = parse_v4a(patch) if patch else call.files
        call.plain_target = short(call.command)
    return call


def _function(call: Call, args: dict[str, Any]) -> None:
    """The command, URL, patch and escalation of a ``function_call``'s arguments."""
    name = call.name
    if name in SHELLS:
        call.command = argv(args.get("command"))
    elif name == "exec_command":
        call.command = argv(args.get("cmd"))
    elif name == "apply_patch":
        call.files = parse_v4a(string(args.get("input")) or string(args.get("patch")))
    elif name == "write_stdin":
        session = args.get("session_id")
        call.plain_target = f"session {session}" if session is not None else ""
    else:
        found = next(
            (args[k] for k in ("path", "file_path", "url", "query") if isinstance(args.get(k), str)), ""
        )
        call.plain_target = short(found)
        call.url = found if found.startswith(("http://", "https://")) else None
    if (
        args.get("sandbox_permissions") == "require_escalated"
        or args.get("with_escalated_permissions") is True
    ):
        call.escalation = string(args.get("justification"))


_EXIT = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")
_EXIT_FIELD = '"exit_code":'
DENIED = "rejected by user"
"""What Codex answers the model when a person refuses a command or a patch."""


def output_text(output: Any) -> str:
    """A tool output as the model saw it: a string, content items, or ``{content|output, …}``."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(string(mapping(item).get("text")) for item in output)
    if isinstance(output, dict):
        return output_text(output.get("content", output.get("output", "")))
    return ""


def exit_code(text: str) -> int | None:
    """The exit code an output reports: ``Process exited with code N`` or a ``metadata.exit_code``."""
    m = _EXIT.search(text, 0, 400)
    if m:
        return int(m.group(1))
    at = text.rfind(_EXIT_FIELD)
    if at < 0:
        return None
    digits = text[at + len(_EXIT_FIELD) : at + len(_EXIT_FIELD) + 12].strip().split(",")[0].rstrip("}")
    return int(digits) if digits.lstrip("-").isdigit() else None


def outcome(output: Any) -> str:
    """``ok``, ``failed`` or ``denied`` for a tool output (read from its first lines, never parsed)."""
    if isinstance(output, dict) and output.get("success") is False:
        return "failed"
    text = output_text(output)
    first = text[:300].split("\n", 1)[0]
    if DENIED in first:
        return "denied"
    code = exit_code(text)
    if code is not None:
        return "ok" if code == 0 else "failed"
    lowered = first.lower()
    if lowered.startswith(("error", "failed", "patch rejected", "aborted")) or " failed:" in lowered:
        return "failed"
    return "ok"
