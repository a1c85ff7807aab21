"""``walkback show``, ``walkback check`` and ``walkback import``: read-only looks at a journal or log."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import emit_json, handle_errors, json_option, progress_printer


def summary(session: Any) -> dict[str, Any]:
    """The ``show --json`` document (stable keys; see docs/cli.md)."""
    pending = []
    for i in session.pending():
        ev = session.event(i)
        pending.append({"lsn": ev.lsn, "tool": ev.tool, "target": ev.target, "agent": ev.agent})
    integ = session.integrity
    return {
        "format": session.format,
        "task": session.task,
        "runs": session.runs,
        "events": len(session),
        "kinds": session.kinds(),
        "agents": [
            {"id": a.id, "parent": a.parent, "run": a.run, "events": a.events, "outcome": a.outcome}
            for a in session.agents.values()
        ],
        "status": session.status,
        "recovered": session.recovered,
        "integrity": {
            "chain": integ.chain,
            "torn_tail": integ.torn_tail is not None,
            "first_bad_lsn": integ.first_bad_lsn,
            "skipped": len(integ.skipped),
        },
        "pending": pending,
        "last_committed_lsn": session.last_committed_lsn,
    }


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@json_option
@handle_errors
def show(path: Path, as_json: bool) -> None:
    """Summarise a journal or log: format, agents, events, status, integrity, pending intents."""
    from importers import load

    session = load(path, progress=progress_printer("reading"))
    data = summary(session)
    if as_json:
        emit_json(data)
        return
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(data["kinds"].items(), key=lambda kv: -kv[1]))
    agents = ", ".join(a["id"] + (f" (child of {a['parent']})" if a["parent"] else "") for a in data["agents"])
    status = data["status"] + (" (recovered)" if data["recovered"] else "")
    lines = [
        f"{path}",
        f"  format      {data['format']}",
        f"  task        {data['task']}",
        f"  runs        {', '.join(data['runs'])}",
        f"  agents      {agents}",
        f"  status      {status}",
        f"  events      {data['events']}  ({kinds})",
        f"  integrity   {session.integrity.badge}",
        f"  committed   through lsn {data['last_committed_lsn']}",
    ]
    if data["pending"]:
        lines.append(f"  pending     {len(data['pending'])} intent(s) without a commit:")
        lines += [f"    lsn {p['lsn']}  {p['tool']}  {p['target']}  ({p['agent']})" for p in data["pending"]]
    click.echo("\n".join(lines))


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--repair", is_flag=True, help="Cut a torn tail (a copy is kept as .broken-*).")
@json_option
@handle_errors
def check(path: Path, repair: bool, as_json: bool) -> None:
    """Check a journal's integrity. Exit 0 intact, 1 damaged, 2 unusable input."""
    from journal import repair as do_repair
    from journal import scan

    if repair:
        report = do_repair(path)
        if as_json:
            emit_json(
                {
                    "repaired": report.truncated_bytes > 0,
                    "truncated_bytes": report.truncated_bytes,
                    "last_good_lsn": report.last_good_lsn,
                    "broken_copy": str(report.broken_copy) if report.broken_copy else None,
                    "recovered_lsn": report.recovered_lsn,
                }
            )
        elif report.truncated_bytes:
            click.echo(
                f"{report.path}: cut a torn tail of {report.truncated_bytes} bytes after lsn "
                f"{report.last_good_lsn}; copy kept as {report.broken_copy}; "
                f"journal.recovered written as lsn {report.recovered_lsn}"
            )
        else:
            click.echo(f"{report.path}: intact, nothing to repair")
        return
    res = scan(path)
    data = {
        "ok": res.intact,
        "dialect": res.dialect,
        "records": res.records,
        "last_lsn": res.last_lsn,
        "chain": res.chain,
        "torn_tail": res.torn_tail,
        "corrupt": [{"lsn": d.lsn, "line": d.line, "reason": d.reason} for d in res.corrupt],
        "torn_lines": [{"lsn": d.lsn, "line": d.line, "reason": d.reason} for d in res.torn],
    }
    if as_json:
        emit_json(data)
    else:
        where = res.path
        if res.intact:
            click.echo(f"{where}: intact — {res.records} records through lsn {res.last_lsn}, chain {res.chain}")
        for d in res.corrupt:
            click.echo(f"{where}:{d.line}: corrupt (lsn {d.lsn}): {d.reason}", err=True)
        for d in res.torn:
            click.echo(f"{where}:{d.line}: torn tail (lsn {d.lsn}): {d.reason}", err=True)
        if res.torn and not res.corrupt:
            click.echo(f"{where}: repairable with `walkback check --repair {where}`", err=True)
    sys.exit(0 if res.intact else 1)


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path),
              help="Run directory (or .jsonl file) to write.")
@handle_errors
def import_(path: Path, out: Path) -> None:
    """Convert any supported journal or agent log into a hash-chained v1 journal."""
    from importers import load, write_journal

    session = load(path, progress=progress_printer("reading"))
    written = write_journal(session, out)
    click.echo(f"{written}: {len(session)} events from {session.format} ({path})")
