"""The hook command: ``python -m walkback.agent.hooks AGENT [--on-failure allow]``, payload on stdin.

Exit codes are the agent's (the adapter's :func:`reply`): for Claude Code, 2 blocks the tool call
and shows the one-line reason. The failure policy: an intent that cannot be made durable (disk full,
read-only, I/O error) blocks the mutating call unless installed with ``--on-failure allow``; a
payload that cannot be read is one stderr line and never blocks; nothing prints a traceback.
"""

from __future__ import annotations

import importlib
import json
import sys
from types import ModuleType
from typing import Any

from .adapter import COMMAND, FS, PRE, START, Hook, Outcome, PayloadError, Reply

ADAPTERS = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini-cli": "gemini_cli",
    "copilot-cli": "copilot_cli",
}
"""Agent name (as ``walkback hooks install --agent`` spells it) -> its adapter module."""
USAGE = "usage: python -m walkback.agent.hooks claude-code|codex|gemini-cli|copilot-cli [--on-failure allow]"


def adapter(agent: str) -> ModuleType:
    """The adapter module of ``agent`` (raises KeyError for an unknown agent)."""
    return importlib.import_module("." + ADAPTERS[agent], __package__)


def parse(data: bytes, mod: ModuleType) -> Hook:
    """The payload's hook. Raises PayloadError (one line) when it is not a JSON object it maps."""
    try:
        payload: Any = json.loads(data)
    except (ValueError, RecursionError):
        raise PayloadError("the payload is not JSON") from None
    if not isinstance(payload, dict):
        raise PayloadError("the payload is not a JSON object")
    hook: Hook = mod.read(payload)
    return hook


def handle(agent: str, hook: Hook, *, allow: bool) -> Outcome:
    """Journal ``hook``; a failure blocks a mutating tool unless ``allow``, else it is a warning."""
    from .record import journal

    try:
        journal(agent, hook)
        if hook.event == START:
            from .resume import briefs

            return Outcome(hook, context=briefs(agent, hook))
    except Exception as e:  # noqa: BLE001 - the one boundary: whatever failed, the agent gets one line
        why = f"walkback: not journaled ({_one_line(e)})"
        mutating = hook.event == PRE and hook.call is not None and hook.call.effect in (FS, COMMAND)
        if mutating and not allow:
            return Outcome(
                hook, blocked=f"{why}; the tool call is blocked (walkback hooks --on-failure allow)"
            )
        return Outcome(hook, warning=why)
    return Outcome(hook)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:300]


def run(argv: list[str], data: bytes) -> Reply:
    """What the hook prints and exits with, for ``argv`` (after the program name) and the payload."""
    if (
        not argv
        or argv[0] not in ADAPTERS
        or argv[1:] not in ([], ["--on-failure", "allow"], ["--on-failure", "block"])
    ):
        return Reply(stderr=USAGE + "\n", code=1)
    mod = adapter(argv[0])
    try:
        hook = parse(data, mod)
    except PayloadError as e:
        return Reply(stderr=f"walkback: payload ignored: {e}\n")
    reply: Reply = mod.reply(handle(argv[0], hook, allow=argv[1:] == ["--on-failure", "allow"]))
    return reply


def main() -> None:
    try:
        reply = run(sys.argv[1:], sys.stdin.buffer.read())
    except Exception as e:  # noqa: BLE001 - never a traceback in the agent's window
        reply = Reply(stderr=f"walkback: hook failed: {_one_line(e)}\n", code=1)
    if reply.stdout:
        sys.stdout.write(reply.stdout)
    if reply.stderr:
        sys.stderr.write(reply.stderr)
    sys.stdout.flush()
    sys.exit(reply.code)
