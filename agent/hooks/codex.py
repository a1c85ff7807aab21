"""Codex CLI's hook payloads (docs/hooks.md; captured from Codex 0.171.0 run offline).

Codex's hooks speak Claude Code's dialect: the same envelope (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``), ``tool_name``/``tool_input``/``tool_use_id`` (the Responses API
``call_id``), exit 2 with the reason on stderr to block. What differs is the tools: the shell
(``exec_command``, ``shell``) arrives as ``Bash`` with ``{"command"}`` and a ``cwd`` that is the
command's own working directory, and ``apply_patch`` as ``{"command": <V4A patch>}`` whose
expected result is the patch applied in memory to each file's pre-image. The workspace is the
session's, from the first line (``session_meta``) of the rollout the payload names.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import claude_code
from .adapter import COMMAND, FS, Call, Expect, Hook, Outcome, PayloadError, Reply, Target, Unknown

AGENT = "codex"
PATCH_TOOLS = ("apply_patch", "applypatch")
SHELL_TOOLS = ("Bash", "shell", "exec_command", "local_shell", "container.exec")
"""``Bash`` is what Codex 0.171 calls ``exec_command`` in hooks; the rest are older names."""
META_MAX = 1 << 20
"""The longest rollout first line read for the session's cwd (its instructions make it ~20 KiB)."""


def read(payload: dict[str, Any]) -> Hook:
    """The hook a Codex payload describes (the envelope and events are Claude Code's).

    Raises:
        PayloadError: a field the event needs is missing or of the wrong type.
    """
    hook = claude_code.read(payload)
    workspace = session_cwd(hook.transcript) or hook.workspace
    hook = hook._replace(workspace=workspace)
    call = hook.call
    if call is None:
        return hook
    command = call.args.get("command")
    if call.tool in PATCH_TOOLS:
        if not isinstance(command, str):
            raise PayloadError(f"{call.tool} without a patch")
        return hook._replace(call=patch_call(call._replace(effect=FS), command, hook_cwd(payload)))
    if call.tool in SHELL_TOOLS:
        from walkback.journal.v4a import shell_patch

        patch = shell_patch(command) if isinstance(command, str) else None
        if patch is not None:  # ``apply_patch <<'EOF'`` in a shell: Codex applies it itself
            return hook._replace(
                call=patch_call(call._replace(effect=FS), patch, hook_cwd(payload)), result=None
            )
        return hook._replace(call=call._replace(effect=COMMAND, cwd=hook_cwd(payload)))
    return hook


def reply(outcome: Outcome) -> Reply:
    """Codex reads a hook's exit and output as Claude Code does."""
    return claude_code.reply(outcome)


def hook_cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    return os.path.abspath(cwd) if isinstance(cwd, str) else os.getcwd()


def session_cwd(rollout: str | None) -> str | None:
    """The session's working directory, from the rollout's ``session_meta`` (None when unreadable)."""
    if not rollout:
        return None
    try:
        with open(rollout, "rb") as f:
            first = json.loads(f.readline(META_MAX))
    except (OSError, ValueError):
        return None
    meta = first.get("payload") if isinstance(first, dict) and first.get("type") == "session_meta" else None
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None


def patch_call(call: Call, patch: str, cwd: str) -> Call:
    """A V4A patch's call: one target per file it touches (a move: the source and the new path),
    each with the content the patch leaves, named absolutely (the patch's paths are ``cwd``'s)."""
    from walkback.journal.v4a import parse_v4a

    files = parse_v4a(patch)
    if not files:
        raise PayloadError(f"{call.tool} input is not a V4A patch")
    targets: list[Target] = []
    for f in files:
        source = os.path.join(cwd, f.path)
        if f.operation == "create":
            targets.append(Target(source, _added((f.added_text or "").encode("utf-8"))))
        elif f.operation == "delete":
            targets.append(Target(source, _deleted))
        elif f.operation == "update":
            targets.append(Target(source, _updater(f.body)))
        else:  # a move: the source goes, the destination gets the source updated
            dest = os.path.join(cwd, f.moved_to or f.path)
            targets.append(Target(source, _deleted))
            targets.append(Target(dest, _moved(source, f.body)))
    return call._replace(targets=tuple(targets))


def _added(content: bytes) -> Expect:
    """An added file is the patch's lines, whatever was there."""
    return lambda _pre: content


def _deleted(pre: bytes | None) -> bytes | None:
    if pre is None:
        raise Unknown("a deletion of a file that does not exist")
    return None


def _updater(body: str) -> Expect:
    return lambda pre: updated(pre, body)


def _moved(source: str, body: str) -> Expect:
    def expect(_pre: bytes | None) -> bytes | None:
        try:
            with open(source, "rb") as f:
                return updated(f.read(), body)
        except OSError:
            raise Unknown("the moved file cannot be read") from None

    return expect


def updated(pre: bytes | None, body: str) -> bytes:
    """An ``Update File`` body applied to the file's content as Codex applies it (the result always
    ends with a newline); :class:`Unknown` when the hunks do not apply exactly once."""
    from walkback.journal.patches import apply

    if pre is None:
        raise Unknown("an update of a file that does not exist")
    try:
        text = pre.decode("utf-8")
    except UnicodeDecodeError:
        raise Unknown("the file is not UTF-8") from None
    out = apply(text, body) if body.strip() else text
    if out is None:
        raise Unknown("the patch does not apply to the file")
    return (out if out.endswith("\n") else out + "\n").encode("utf-8")
