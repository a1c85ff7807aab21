"""``walkback hooks install|uninstall|status``: walkback's entries in an agent's hook config.

One :class:`AgentConfig` per agent (:data:`CONFIGS`) says where its project and user config live
and which events get which command. Installing merges: every other key and every hook of the
user's own stays as it was, installing twice adds nothing, uninstalling removes walkback's entries
and only those (an entry is walkback's when its command runs :data:`HOT`); the
file is backed up beside itself (``<name>.walkback-backup``) before each change and written
atomically. A config that is not the JSON object the agent expects is refused and left untouched.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from walkback.journal.errors import WalkbackError
from walkback.journal.fileops import atomic_write

HOT = "walkback.agent.hooks"
"""The module every tool hook runs (``python -m walkback.agent.hooks AGENT``)."""
BACKUP = ".walkback-backup"


class ConfigError(WalkbackError):
    """An agent's hook config cannot be changed as asked (exit 2: the user must fix the file)."""

    exit_code = 2


def command(agent: str, *, on_failure: str = "block") -> str:
    """The hook command for ``agent``: this interpreter's absolute path, so it works from any
    directory (``python -m`` starts faster than a console script's wrapper)."""
    python = shlex.quote(os.path.abspath(sys.executable))
    return f"{python} -m {HOT} {agent}" + (" --on-failure allow" if on_failure == "allow" else "")


def ours(command: object) -> bool:
    """Whether a hook command is walkback's (whatever interpreter path an earlier install wrote)."""
    return isinstance(command, str) and f" -m {HOT} " in command + " "


# -- Claude Code -------------------------------------------------------------------------------

CLAUDE_TOOLS = "Write|Edit|MultiEdit|NotebookEdit|Bash"
"""Claude Code's tools that change files or run commands (the matcher is a regex on the name)."""
CLAUDE_EVENTS: Events = {
    "PreToolUse": (CLAUDE_TOOLS, 60),
    "PostToolUse": (CLAUDE_TOOLS, 60),
    "PostToolUseFailure": (CLAUDE_TOOLS, 60),
    "SubagentStart": (None, 60),
    "SubagentStop": (None, 60),
    "PreCompact": (None, 120),
    "SessionStart": (None, 300),
}
"""Event -> (matcher, timeout in seconds: a checkpoint and a recovery may take longer than a call)."""
Events = dict[str, tuple[str | None, int]]
"""An agent's hooked events: event -> (matcher, timeout in the unit its config uses)."""


def _groups(config: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = config.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError('"hooks" is not an object; fix or remove it first', path=path)
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise ConfigError(f'"hooks.{event}" is not a list of objects; fix it first', path=path)
    return hooks


def grouped_install(events: Events) -> Callable[[dict[str, Any], str, Path], dict[str, Any]]:
    """An installer for a config in Claude Code's shape, which Codex and Gemini CLI share: one
    group per event (``{"matcher", "hooks": [{"type", "command", "timeout"}]}``)."""

    def install(config: dict[str, Any], cmd: str, path: Path) -> dict[str, Any]:
        hooks = _groups(grouped_uninstall(config, path), path)
        for event, (matcher, timeout) in events.items():
            entry = {"type": "command", "command": cmd, "timeout": timeout}
            group: dict[str, Any] = {"matcher": matcher} if matcher else {}
            group["hooks"] = [entry]
            hooks.setdefault(event, []).append(group)
        return config

    return install


def _without(config: dict[str, Any], path: Path, strip: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """The config with each event's entries passed through ``strip`` (None: the entry goes);
    events left empty, and ``hooks`` left empty, are dropped."""
    hooks = _groups(config, path)
    for event in list(hooks):
        kept = [e for e in map(strip, hooks[event]) if e is not None]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del config["hooks"]
    return config


def _events_with(config: dict[str, Any], mine: Callable[[dict[str, Any]], bool]) -> list[str]:
    """The events that have an entry ``mine`` says is walkback's."""
    hooks = config.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return sorted(
        event
        for event, entries in hooks.items()
        if isinstance(entries, list) and any(isinstance(e, dict) and mine(e) for e in entries)
    )


def _ours_in(group: dict[str, Any]) -> list[Any]:
    """walkback's hooks in a group (``{"matcher", "hooks": [...]}``)."""
    inner = group.get("hooks")
    if not isinstance(inner, list):
        return []
    return [h for h in inner if isinstance(h, dict) and ours(h.get("command"))]


def _strip_group(group: dict[str, Any]) -> dict[str, Any] | None:
    """A group without walkback's hooks (None when they were all it held)."""
    mine = _ours_in(group)
    if not mine:
        return group
    rest = [h for h in group["hooks"] if h not in mine]
    return {**group, "hooks": rest} if rest else None


def grouped_uninstall(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A grouped config without walkback's hooks (groups left empty by that are dropped)."""
    return _without(config, path, _strip_group)


def grouped_installed(config: dict[str, Any]) -> list[str]:
    """The events walkback's hooks are installed on."""
    return _events_with(config, lambda group: bool(_ours_in(group)))


# -- Codex, Gemini CLI ----------------------------------------------------------------------------

CODEX_TOOLS = "apply_patch|Bash"
"""Codex's tools that change files or run commands, as its hooks name them (the shell is ``Bash``)."""
CODEX_EVENTS: Events = {
    "PreToolUse": (CODEX_TOOLS, 60),
    "PostToolUse": (CODEX_TOOLS, 60),
    "PreCompact": (None, 120),
    "SessionStart": (None, 300),
}
"""Codex's ``hooks.json`` (Claude Code's shape, timeouts in seconds)."""
CODEX_TRUST = (
    "Codex runs these hooks once you trust them: open /hooks in codex and trust walkback's "
    "(a project's hooks also need the project trusted)"
)
GEMINI_TOOLS = "write_file|replace|run_shell_command"
GEMINI_EVENTS: Events = {
    "BeforeTool": (GEMINI_TOOLS, 60_000),
    "AfterTool": (GEMINI_TOOLS, 60_000),
    "PreCompress": (None, 120_000),
    "SessionStart": (None, 300_000),
}
"""Gemini CLI's ``settings.json`` ``hooks`` (Claude Code's shape, timeouts in milliseconds)."""


def codex_home(home: Path) -> Path:
    """Codex's user config folder: ``$CODEX_HOME``, else ``~/.codex``."""
    return Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"


# -- Copilot CLI -----------------------------------------------------------------------------------

COPILOT_EVENTS = {"preToolUse": 60, "postToolUse": 60, "postToolUseFailure": 60, "sessionStart": 300}
"""Copilot CLI's events (camelCase: its own payloads and tool names) -> ``timeoutSec``. Its entries
take no matcher here: every tool call runs the hook, which journals only the mutating ones."""


def copilot_home(home: Path) -> Path:
    """Copilot's user config folder: ``$COPILOT_HOME``, else ``~/.copilot``."""
    return Path(os.environ["COPILOT_HOME"]) if os.environ.get("COPILOT_HOME") else home / ".copilot"


def _copilot_ours(entry: dict[str, Any]) -> bool:
    return ours(entry.get("bash")) or ours(entry.get("command"))


def copilot_install(config: dict[str, Any], cmd: str, path: Path) -> dict[str, Any]:
    """A ``.github/hooks/*.json`` (``{"version": 1, "hooks": {event: [entry]}}``) with walkback's
    entries (``{"type": "command", "bash", "timeoutSec"}``)."""
    hooks = _groups(copilot_uninstall(config, path), path)
    config.setdefault("version", 1)
    for event, timeout in COPILOT_EVENTS.items():
        hooks.setdefault(event, []).append({"type": "command", "bash": cmd, "timeoutSec": timeout})
    return config


def copilot_uninstall(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """The config without walkback's entries (events left empty by that are dropped)."""
    return _without(config, path, lambda entry: None if _copilot_ours(entry) else entry)


def copilot_installed(config: dict[str, Any]) -> list[str]:
    """The events walkback's entries are on."""
    return _events_with(config, _copilot_ours)


@dataclass(frozen=True)
class AgentConfig:
    """Where one agent keeps its hook config and how walkback's entries go in and out of it."""

    agent: str
    project: Callable[[Path], Path]
    """The project config's path in a workspace."""
    user: Callable[[Path], Path]
    """The user config's path in a home folder."""
    install: Callable[[dict[str, Any], str, Path], dict[str, Any]]
    uninstall: Callable[[dict[str, Any], Path], dict[str, Any]]
    installed: Callable[[dict[str, Any]], list[str]]
    events: tuple[str, ...]
    """Every event an install writes (what ``status`` checks for)."""
    notice: str = ""
    """What the user must still do before the agent runs the hooks (printed by an install)."""


CONFIGS: dict[str, AgentConfig] = {
    "claude-code": AgentConfig(
        "claude-code",
        lambda ws: ws / ".claude" / "settings.json",
        lambda home: home / ".claude" / "settings.json",
        grouped_install(CLAUDE_EVENTS),
        grouped_uninstall,
        grouped_installed,
        tuple(CLAUDE_EVENTS),
    ),
    "codex": AgentConfig(
        "codex",
        lambda ws: ws / ".codex" / "hooks.json",
        lambda home: codex_home(home) / "hooks.json",
        grouped_install(CODEX_EVENTS),
        grouped_uninstall,
        grouped_installed,
        tuple(CODEX_EVENTS),
        CODEX_TRUST,
    ),
    "gemini-cli": AgentConfig(
        "gemini-cli",
        lambda ws: ws / ".gemini" / "settings.json",
        lambda home: home / ".gemini" / "settings.json",
        grouped_install(GEMINI_EVENTS),
        grouped_uninstall,
        grouped_installed,
        tuple(GEMINI_EVENTS),
    ),
    "copilot-cli": AgentConfig(
        "copilot-cli",
        lambda ws: ws / ".github" / "hooks" / "walkback.json",
        lambda home: copilot_home(home) / "hooks" / "walkback.json",
        copilot_install,
        copilot_uninstall,
        copilot_installed,
        tuple(COPILOT_EVENTS),
    ),
}
"""Agent -> its config writer. Another agent: a table entry (and its adapter in agent/hooks/)."""


def config_path(agent: str, *, scope: str, workspace: Path, home: Path | None = None) -> Path:
    conf = CONFIGS[agent]
    return conf.project(workspace) if scope == "project" else conf.user(home or Path.home())


def load(path: Path) -> dict[str, Any]:
    """The config at ``path`` ({} when there is none). Raises ConfigError when it is not an object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read it: {e}; left untouched", path=path) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"not valid JSON ({e.msg}); left untouched", path=path, line=e.lineno) from None
    if not isinstance(data, dict):
        raise ConfigError("not a JSON object; left untouched", path=path)
    return data


def _save(path: Path, config: dict[str, Any]) -> Path | None:
    """Write ``config`` atomically after backing up the file it replaces; return the backup."""
    backup = None
    if path.exists():
        backup = path.with_name(path.name + BACKUP)
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode())
    return backup


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did to one config file."""

    path: Path
    changed: bool
    events: list[str]
    """The events walkback's hooks are on afterwards."""
    backup: Path | None = None


def install(agent: str, path: Path, cmd: str) -> Change:
    """Merge walkback's hooks running ``cmd`` into the config at ``path`` (idempotent)."""
    conf = CONFIGS[agent]
    before = load(path)
    after = conf.install(json.loads(json.dumps(before)), cmd, path)
    if after == before:
        return Change(path, False, conf.installed(after))
    return Change(path, True, conf.installed(after), _save(path, after))


def uninstall(agent: str, path: Path) -> Change:
    """Remove walkback's hooks (and only those) from the config at ``path``."""
    conf = CONFIGS[agent]
    if not path.exists():
        return Change(path, False, [])
    before = load(path)
    after = conf.uninstall(json.loads(json.dumps(before)), path)
    if after == before:
        return Change(path, False, conf.installed(after))
    return Change(path, True, conf.installed(after), _save(path, after))


def status(agent: str, path: Path) -> dict[str, Any]:
    """Whether walkback's hooks are installed in the config at ``path``, on which events."""
    conf = CONFIGS[agent]
    try:
        events = conf.installed(load(path))
        problem = None
    except ConfigError as e:
        events, problem = [], e.message
    missing = [e for e in conf.events if e not in events]
    return {
        "agent": agent,
        "config": str(path),
        "exists": path.exists(),
        "installed": bool(events) and not missing,
        "events": events,
        "missing": missing if events else [],
        "problem": problem,
    }
