"""What an agent's hook payload means, agent-neutral: the contract every adapter module fills.

An adapter is a module (``agent/hooks/<agent>.py``) with:

* ``AGENT``: its folder name under ``$WALKBACK_HOME/hooks`` (:data:`journal.hookpaths.AGENTS`);
* ``read(payload: dict) -> Hook``: the payload mapped, or :class:`PayloadError` when it cannot be;
* ``reply(outcome: Outcome) -> Reply``: what the agent must see (a block, added context, nothing).

Everything else (paths, hashes, images, snapshots, the journal) is :mod:`agent.hooks.record`'s.
Kept free of imports beyond ``typing``: it is on every hook call's path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

PRE = "pre"
"""Before a tool runs (Claude Code PreToolUse, Gemini BeforeTool, Copilot preToolUse)."""
POST = "post"
"""After a tool ran (PostToolUse, AfterTool, postToolUse)."""
FAIL = "fail"
"""A tool call failed (Claude Code PostToolUseFailure, or a post payload that reports an error)."""
SPAWN = "spawn"
"""A subagent started (Claude Code SubagentStart)."""
SPAWN_END = "spawn.end"
"""A subagent stopped (Claude Code SubagentStop)."""
COMPACT = "compact"
"""The conversation is about to be compacted (Claude Code PreCompact): checkpoint first."""
START = "start"
"""A session starts or resumes (SessionStart): recovery may hand the agent a brief."""
PROMPT = "prompt"
"""The user sent a prompt (UserPromptSubmit): the session's task, if none is known yet."""
OTHER = "other"
"""Any other event: nothing to journal."""

FS = "fs"
"""A tool that changes files (its targets are known before it runs)."""
COMMAND = "command"
"""A shell command (its effects are unknown: a snapshot of the tree is taken before it)."""
READ = "other"
"""Any other tool (reads, searches, web): journaled only when it fails nothing; never blocked."""

Expect = Callable[[bytes | None], bytes | None]
"""The content a file tool leaves, from the content before (None: the file does not exist; a
result of None: the tool deletes it). Raises :class:`Unknown` when it cannot be computed."""


class PayloadError(Exception):
    """A payload the adapter cannot map; the message is one line for the agent's stderr."""


class Unknown(Exception):
    """An expected post image cannot be computed (the edit does not apply to the pre-image)."""


class Target(NamedTuple):
    """One file a file tool changes."""

    path: str
    """As the agent names it: absolute, or relative to the payload's ``cwd``."""
    expect: Expect | None = None
    """How to compute the content after the tool from the content before (None: not computable)."""


class Call(NamedTuple):
    """One tool call, as the journal records it."""

    id: str
    """The agent's call id (``tool_use_id``), or a synthesized one (:func:`synthesized_id`)."""
    tool: str
    """The agent's tool name."""
    effect: str
    """:data:`FS`, :data:`COMMAND` or :data:`READ`."""
    args: dict[str, Any]
    """The tool input, as the agent gave it."""
    targets: tuple[Target, ...] = ()
    """The files a file tool changes (one intent each)."""
    cwd: str | None = None
    """Where a command runs (default: the session's workspace)."""


class Hook(NamedTuple):
    """One hook invocation, agent-neutral."""

    event: str
    """:data:`PRE`, :data:`POST`, ... (what happened)."""
    session: str
    """The agent's session id."""
    workspace: str
    """The payload's ``cwd``, absolute."""
    transcript: str | None = None
    """The agent's transcript path, when the payload names it."""
    call: Call | None = None
    """The tool call (tool events)."""
    result: dict[str, Any] | None = None
    """After a command: ``exit_code`` (if the agent says), ``output_tail``."""
    error: str | None = None
    """Why a call failed (:data:`FAIL`)."""
    child: str | None = None
    """A subagent's id (:data:`SPAWN`, :data:`SPAWN_END`)."""
    child_transcript: str | None = None
    """A subagent's transcript path."""
    text: str | None = None
    """The user's prompt (:data:`PROMPT`), a subagent's task or outcome, a SessionStart's source."""
    agent: str | None = None
    """The subagent whose tool call this is (None: the session's main agent)."""


class Outcome(NamedTuple):
    """What the hook did, for the adapter to put in the agent's terms."""

    hook: Hook | None
    """The hook (None: the payload could not be read)."""
    blocked: str | None = None
    """The tool call must not run, and why (one line)."""
    warning: str | None = None
    """Something went wrong that must not stop the agent (one line for stderr)."""
    context: str | None = None
    """Text to add to the agent's context (a resume brief)."""


class Reply(NamedTuple):
    """What the hook process prints and how it exits."""

    stdout: str = ""
    stderr: str = ""
    code: int = 0


def synthesized_id(order: int, args: dict[str, Any]) -> str:
    """A call id for an agent whose payloads carry none: ``<event-order>:<sha of the tool input>``.

    ``order`` is the number of pre-tool hooks of the session before this one; the post hook finds
    its pre by the same input (docs/hooks.md, "Call ids").
    """
    from walkback.journal.hookpaths import input_digest

    return f"{order}:{input_digest(args)}"
