"""``walkback sessions``: the agent sessions on this machine, newest first."""

from __future__ import annotations

import time

import click

from .common import emit_json, handle_errors, json_option, safe

TASK_SHOWN = 60


@click.command()
@json_option
@click.option(
    "--count", is_flag=True, help="Read every session whole: exact events, and the importer's status."
)
@handle_errors
def sessions(as_json: bool, count: bool) -> None:
    """List Claude Code, Codex, Gemini CLI, Copilot CLI sessions and walkback runs, newest first.

    Each is read from its head and tail (cheap): agent, workspace, task, start, duration,
    records, status. ``--count`` reads each whole for the exact number of events. A hooked session
    (docs/hooks.md) is one row, its transcript's, naming its hook journal.

    Looked for in $CLAUDE_CONFIG_DIR or ~/.claude, $CODEX_HOME or ~/.codex, $GEMINI_CLI_HOME/.gemini
    or ~/.gemini, $COPILOT_HOME or ~/.copilot, and $WALKBACK_HOME or ~/.walkback.
    """
    from walkback.importers.discovery import counted, find_sessions

    found = find_sessions()
    if count:
        found = [counted(s) for s in found]
    if as_json:
        emit_json([s.as_json() for s in found])
        return
    if not found:
        click.echo("no sessions found (`walkback sessions --help` says where they are looked for)")
        return
    size = "events" if count else "records"
    click.echo(f"{'start (UTC)':<17} {'agent':<12} {'status':<10} {'duration':>9} {size:>8}  workspace  task")
    for s in found:
        start = time.strftime("%Y-%m-%d %H:%M", time.gmtime(s.start)) if s.start is not None else "?"
        n = s.events if count else s.records
        task = s.task.strip().split("\n", 1)[0][:TASK_SHOWN]
        took = _duration(s.duration)
        row = f"{start:<17} {s.agent:<12} {s.status:<10} {took:>9} {n!s:>8}"
        click.echo(safe(f"{row}  {s.workspace}  {task}"))
        hooked = f"  (hooked: {s.journal})" if s.journal is not None else ""
        click.echo(safe(f"{'':<17} {s.path}{hooked}"))


def _duration(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return "?"
    minutes, sec = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{sec:02d}s"
