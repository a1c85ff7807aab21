"""``walkback index``, ``search`` and ``blame``: the archive of every session (docs/archive.md)."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from .common import CommandError, emit_json, handle_errors, json_option, safe

DB_HELP = (
    "The archive: a SQLite file, or postgresql://USER@HOST/DB for a team "
    "[default: $WALKBACK_HOME/archive.sqlite]."
)
VIEWER = "http://127.0.0.1:8080"
"""Where ``walkback view`` serves by default: hits link to their step there."""


def _day(value: str | None, name: str) -> float | None:
    """A ``YYYY-MM-DD`` (or full ISO 8601) time as seconds since the epoch, UTC unless it says."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--{name} {safe(value)!s}: not a date (YYYY-MM-DD or ISO 8601)", 2) from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


@click.command("index")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--db", "url", default=None, help=DB_HELP)
@json_option
@handle_errors
def index(paths: tuple[Path, ...], url: str | None, as_json: bool) -> None:
    """Build or update the archive from PATHS (files or folders of sessions), or from every session
    `walkback sessions` finds. Only sessions that are new or whose files changed are read again."""
    from walkback.importers.archive.index import index as run
    from walkback.importers.archive.store import Archive

    started = time.perf_counter()
    show = _progress() if not as_json else None
    with Archive.open(url) as archive:
        report = run(archive, list(paths), progress=show)
    if show is not None:
        sys.stderr.write("\n")
    for path, reason in report.failed:
        click.echo(safe(f"skipped {path}: {reason}"), err=True)
    took = time.perf_counter() - started
    if as_json:
        emit_json(
            {
                "archive": archive.where,
                "indexed": len(report.indexed),
                "unchanged": report.unchanged,
                "events": report.events,
                "failed": [{"path": p, "reason": r} for p, r in report.failed],
                "seconds": round(took, 3),
            }
        )
        return
    click.echo(
        safe(
            f"{archive.where}: {len(report.indexed)} sessions indexed ({report.events:,} events), "
            f"{report.unchanged} unchanged, {len(report.failed)} skipped in {took:.1f} s"
        )
    )


def _progress() -> Any:
    """A one-line progress bar on stderr when it is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int, path: str) -> None:
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {safe(Path(path).name)[:40]:<40}"
        )
        sys.stderr.flush()

    return show


@click.command()
@click.argument("query")
@click.option("--agent", default="", help="Only sessions of this agent (claude-code, codex ...) or agent id.")
@click.option("--workspace", default="", help="Only sessions whose workspace starts with this.")
@click.option("--file", "file", default="", help="Only sessions that changed a file whose path ends so.")
@click.option("--tool", default="", help="Only events of this tool (Bash, apply_patch ...).")
@click.option("--since", default=None, help="Only events at or after this day (YYYY-MM-DD, UTC).")
@click.option("--until", default=None, help="Only events before this day.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--db", "url", default=None, help=DB_HELP)
@json_option
@handle_errors
def search(
    query: str,
    agent: str,
    workspace: str,
    file: str,
    tool: str,
    since: str | None,
    until: str | None,
    limit: int,
    url: str | None,
    as_json: bool,
) -> None:
    """Find events across every indexed session. QUERY is FTS5 syntax: words, "a phrase", prefix*,
    AND / OR / NOT, (groups). Each hit: session, step, time, agent, a snippet with the match in
    «», and the viewer's URL of that step."""
    from walkback.importers.archive.store import Archive, Filters

    filters = Filters(agent, workspace, file, tool, _day(since, "since"), _day(until, "until"))
    with Archive.open(url, create=False) as archive:
        hits = archive.search(query, filters, limit=limit)
    rows = [
        {
            "session": h.session,
            "source": h.path,
            "format": h.format,
            "agent": h.agent,
            "step": h.step,
            "time": _iso(h.ts),
            "kind": h.kind,
            "tool": h.tool,
            "snippet": h.snippet,
            "url": f"{VIEWER}/s/{h.session}/step/{h.step}",
        }
        for h in hits
    ]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no match")
        return
    for r in rows:
        click.echo(
            safe(f"{r['time'] or '?':<20} {r['agent']:<12} step {r['step']:<6} {r['kind']:<12} {r['tool']}")
        )
        click.echo(safe(f"    {r['snippet']}"))
        click.echo(safe(f"    {r['url']}  ({r['source']})"))


def _iso(ts: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)) if ts is not None else None


@click.command()
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--db", "url", default=None, help=DB_HELP)
@click.option("--agent-trace", "trace", is_flag=True, help="Print an Agent Trace record (v0.1.0) instead.")
@json_option
@handle_errors
def blame(file: Path, url: str | None, trace: bool, as_json: bool) -> None:
    """Each line range of FILE as it is now, with the session, step, agent, time and approval of the
    recorded change that wrote it; lines no recorded change explains are "not from a recorded
    session"."""
    from walkback.importers.archive.blame import agent_trace, blame
    from walkback.importers.archive.store import Archive

    with Archive.open(url, create=False) as archive:
        ranges = blame(archive, file)
    if trace:
        emit_json(agent_trace(file, ranges, _repo_root(file)))
        return
    if as_json:
        emit_json([r.as_json() for r in ranges])
        return
    for r in ranges:
        j = r.as_json()
        lines = f"{r.first}-{r.last}" if r.first != r.last else str(r.first)
        if r.change is None:
            click.echo(f"{lines:>11}  not from a recorded session")
            continue
        approval = f" · approved: {j['approval']}" if j["approval"] else ""
        click.echo(
            safe(f"{lines:>11}  {j['time'] or '?'} {j['agent']} step {j['step']} {j['tool']}{approval}")
        )
        click.echo(safe(f"{'':>11}  {j['source']}"))


def _repo_root(file: Path) -> Path | None:
    """The git work tree holding ``file`` (Agent Trace paths are relative to it), if any."""
    for parent in file.resolve().parents:
        if (parent / ".git").exists():
            return parent
    return None
