"""``walkback hooks install|uninstall|status``: walkback as the journal of Claude Code and the others.

The logic is :mod:`agent.hooks.install`; the hook command itself is ``python -m walkback.agent.hooks``
(:mod:`agent.hooks.main`), which these commands write into the agent's config.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import emit_json, handle_errors, json_option, safe

AGENTS = ("claude-code", "codex", "gemini-cli", "copilot-cli")


def _agents() -> tuple[str, ...]:
    from walkback.agent.hooks.install import CONFIGS

    return tuple(a for a in AGENTS if a in CONFIGS)


agent_option = click.option(
    "--agent",
    type=click.Choice(AGENTS),
    required=True,
    help="The agent whose hook config to change.",
)
scope_option = click.option(
    "--scope",
    type=click.Choice(("project", "user")),
    default="project",
    show_default=True,
    help="project: the agent's config in the workspace; user: the one in your home folder.",
)
workspace_option = click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project whose config a project-scope install changes.",
)


def _path(agent: str, scope: str, workspace: Path) -> Path:
    from walkback.agent.hooks.install import CONFIGS, ConfigError, config_path

    if agent not in CONFIGS:
        raise ConfigError(f"hooks for {agent} are not available in this version yet (docs/hooks.md)")
    return config_path(agent, scope=scope, workspace=workspace.resolve())


@click.group()
def hooks() -> None:
    """Journal a running agent's tool calls through its hooks (docs/hooks.md).

    Before each file edit or shell command the agent runs, walkback's hook fsyncs an intent (the
    file's pre-image and expected post hash, or a snapshot of the tree) to
    $WALKBACK_HOME/hooks/AGENT/SESSION/journal.jsonl; after it, a commit with the observed hash.
    """


@hooks.command()
@agent_option
@scope_option
@workspace_option
@click.option(
    "--on-failure",
    type=click.Choice(("block", "allow")),
    default="block",
    show_default=True,
    help="When an intent cannot be made durable (disk full, read-only): block the tool call, or let it run.",
)
@handle_errors
def install(agent: str, scope: str, workspace: Path, on_failure: str) -> None:
    """Add walkback's hooks to the agent's config (merged: your own hooks and settings stay)."""
    from walkback.agent.hooks import install as setup

    path = _path(agent, scope, workspace)
    change = setup.install(agent, path, setup.command(agent, on_failure=on_failure))
    if not change.changed:
        click.echo(safe(f"{path}: walkback's hooks already installed ({', '.join(change.events)})"))
        return
    kept = f" (previous version kept as {change.backup})" if change.backup else ""
    click.echo(safe(f"{path}: walkback's hooks installed on {', '.join(change.events)}{kept}"))
    if setup.CONFIGS[agent].notice:
        click.echo(setup.CONFIGS[agent].notice)


@hooks.command()
@agent_option
@scope_option
@workspace_option
@handle_errors
def uninstall(agent: str, scope: str, workspace: Path) -> None:
    """Remove walkback's hooks, and only those, from the agent's config."""
    from walkback.agent.hooks import install as setup

    path = _path(agent, scope, workspace)
    change = setup.uninstall(agent, path)
    if not change.changed:
        click.echo(safe(f"{path}: no walkback hooks to remove"))
        return
    click.echo(safe(f"{path}: walkback's hooks removed (previous version kept as {change.backup})"))


@hooks.command()
@click.option("--agent", type=click.Choice(AGENTS), help="Only this agent (default: every one).")
@workspace_option
@json_option
@handle_errors
def status(agent: str | None, workspace: Path, as_json: bool) -> None:
    """Where walkback's hooks are installed (project and user config of each agent)."""
    from walkback.agent.hooks.install import status as status_of

    rows = [
        {"scope": scope, **status_of(a, _path(a, scope, workspace))}
        for a in ((agent,) if agent else _agents())
        for scope in ("project", "user")
    ]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        state = "installed" if r["installed"] else "partly installed" if r["events"] else "not installed"
        if r["problem"]:
            state = f"unreadable config: {r['problem']}"
        elif r["missing"]:
            state += f" (missing: {', '.join(r['missing'])})"
        click.echo(safe(f"{r['agent']:<12} {r['scope']:<8} {state}  {r['config']}"))
