"""``walkback show``, ``walkback check`` and ``walkback import``: read-only looks at a journal or log."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import click

from .common import emit_json, handle_errors, json_option, progress_printer, safe, say_verification


def summary(session: Any) -> dict[str, Any]:
    """The ``show --json`` document; its keys are a contract (tests/cli pins them)."""
    from walkback.timeline.views import approval_counts, approvals, files_summary

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
        "files": files_summary(session),
        "approvals": approval_counts(approvals(session)),
        "journal": str(session.hooked.journal) if session.hooked is not None else None,
        "hooked": session.hooked.to_json() if session.hooked is not None else None,
        "verification": session.verification.as_json() if session.verification is not None else None,
    }


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@json_option
@handle_errors
def show(path: Path, as_json: bool) -> None:
    """Summarise a journal or log: format, agents, events, status, integrity, pending intents.

    Damage is reported, not fatal (exit 0); input that is not a readable journal or log exits 2.
    """
    from walkback.importers import load
    from walkback.importers.describe import headline, run_facts

    session = load(path, progress=progress_printer("reading"))
    data = summary(session)
    if as_json:
        emit_json(data)
        return
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(data["kinds"].items(), key=lambda kv: -kv[1]))
    agents = ", ".join(a["id"] + (f" (child of {a['parent']})" if a["parent"] else "")
                       for a in data["agents"])
    facts = run_facts(session)
    status = data["status"] + (" (recovered)" if data["recovered"] else "")
    status += f" ({facts['reason']})" if "reason" in facts else ""
    lines = [
        f"{path}",
        f"  format      {data['format']}",
        f"  task        {headline(data['task'] or '')}",
        f"  runs        {', '.join(data['runs'])}",
        f"  agents      {agents}",
        f"  status      {status}",
        f"  events      {data['events']}  ({kinds})",
        *([f"  model       {facts['model']}"] if "model" in facts else []),
        *([f"  files       {len(data['files'])} changed: {', '.join(f['path'] for f in data['files'])}"]
          if data["files"] else []),
        f"  integrity   {session.integrity.badge}{_first_damage(session.integrity)}",
        *([f"  bundle      {session.verification.verdict}"] if session.verification is not None else []),
    ]
    if data["last_committed_lsn"] is not None:
        lines.append(f"  committed   through lsn {data['last_committed_lsn']}")
    elif data["format"].startswith("walkback"):  # other agents' logs have no commits to count
        lines.append("  committed   nothing yet")
    if data["hooked"]:
        hooked = data["hooked"]
        lines.append(f"  journal     {data['journal']} (hooked: {hooked['linked_calls']} call(s) journaled)")
        lines += [
            f"  mismatch    {m['call']}  {m['target']}: expected {m['expected']}, observed {m['observed']}"
            for m in hooked["mismatches"]
        ]
    if data["pending"]:
        lines.append(f"  pending     {len(data['pending'])} intent(s) without a commit:")
        lines += [f"    lsn {p['lsn']}  {p['tool']}  {p['target']}  ({p['agent']})" for p in data["pending"]]
    width = _width()
    click.echo("\n".join(_fit(safe(line), width) for line in lines))


NOT_A_TERMINAL_WIDTH = 200
"""Characters a summary line may have when the output is a file or a pipe."""


def _width() -> int:
    """The terminal's width, or :data:`NOT_A_TERMINAL_WIDTH` when the output is not a terminal."""
    if not sys.stdout.isatty():
        return NOT_A_TERMINAL_WIDTH
    return max(shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns, 20)


def _fit(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, an ellipsis saying it was."""
    return line if len(line) <= width else line[: width - 1] + "…"


def _first_damage(integ: Any) -> str:
    bad = integ.corrupt[:1] or integ.skipped[:1]
    return f" (line {bad[0]['line']}: {bad[0]['reason']})" if bad else ""


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--repair", is_flag=True, help="Cut a torn tail (a copy is kept as .broken-*).")
@json_option
@handle_errors
def check(path: Path, repair: bool, as_json: bool) -> None:
    """Check a journal's integrity. Exit 0 intact, 1 damaged, 2 unusable input.

    An agent's transcript that was hooked (docs/hooks.md) is checked through its hook journal.
    """
    from walkback.journal import journal_path, scan
    from walkback.journal.segments import archived

    path = _hook_journal(path) or path
    if repair:
        _repair(path, as_json)
        return
    if archived(journal_path(path)):
        _check_run(path, as_json)
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
        _report(res)
    sys.exit(0 if res.intact else 1)


def _hook_journal(path: Path) -> Path | None:
    """The hook journal of ``path`` when it is a hooked agent's transcript (else None)."""
    from walkback.importers import detect, load
    from walkback.journal.errors import WalkbackError

    try:
        if detect(path).name == "walkback":
            return None
        session = load(path)
    except WalkbackError:
        return None  # the journal check says what is wrong with it
    return Path(session.hooked.journal) if session.hooked is not None else None


def _check_run(path: Path, as_json: bool) -> None:
    """``check`` on a rotated run: every archived segment, the live file, and the links between them."""
    from walkback.journal.segments import scan_run

    run = scan_run(path)
    live = run.live

    def where(res: Any, d: Any) -> dict[str, Any]:
        return {"lsn": d.lsn, "line": d.line, "reason": d.reason, "file": str(res.path)}

    data = {
        "ok": run.intact,
        "dialect": live.dialect,
        "records": run.records,
        "last_lsn": live.last_lsn,
        "chain": "broken" if run.links or any(f.corrupt for f in run.files) else live.chain,
        "torn_tail": live.torn_tail,
        "corrupt": [where(f, d) for f in run.files for d in f.corrupt + (f.torn if f is not live else [])]
        + [{"lsn": k.lsn, "line": k.line, "reason": k.reason, "file": str(k.path)} for k in run.links],
        "torn_lines": [where(live, d) for d in live.torn],
        "segments": [
            {"path": str(f.path), "first_lsn": f.first_lsn, "last_lsn": f.last_lsn, "ok": f.intact}
            for f in run.files[:-1]
        ],
    }
    if as_json:
        emit_json(data)
    elif run.intact:
        click.echo(
            f"{safe(live.path)}: intact: {run.records} records through lsn {live.last_lsn} in "
            f"{len(run.files) - 1} archived segment(s) and the live file, chain {data['chain']}"
        )
    else:
        for f in run.files:
            if not f.intact:
                _report(f, repairable=f is live)
        for k in run.links:
            click.echo(f"{safe(k.path)}:{k.line}: broken link: {safe(k.reason)}", err=True)
    sys.exit(0 if run.intact else 1)


MAX_SHOWN = 5
"""Corrupt lines listed one by one before the rest are counted."""


def _report(res: Any, *, repairable: bool = True) -> None:
    """The human form of ``check``: one line when intact, one per problem (bounded) when not.

    An archived segment is never repaired (it is followed by the rest of the run): no hint then.
    """
    where = safe(res.path)
    if res.intact:
        click.echo(f"{where}: intact: {res.records} records through lsn {res.last_lsn}, chain {res.chain}")
        return
    for d in res.corrupt[:MAX_SHOWN]:
        click.echo(f"{where}:{d.line}: corrupt (lsn {d.lsn}): {safe(d.reason)}", err=True)
    if len(res.corrupt) > MAX_SHOWN:
        more = len(res.corrupt) - MAX_SHOWN
        click.echo(f"{where}: ... and {more} more corrupt lines (see --json)", err=True)
    if res.torn:
        d = res.torn[0]
        tail = res.torn_tail
        fix = "" if res.corrupt or not repairable else f"; repairable with `walkback check --repair {where}`"
        click.echo(
            f"{where}:{d.line}: torn tail of {tail['bytes']} bytes ({len(res.torn)} line(s)) after lsn "
            f"{res.last_lsn}: {safe(d.reason)}{fix}",
            err=True,
        )


def _repair(path: Path, as_json: bool) -> None:
    """``check --repair``: hold the run lock (if the journal is in a run dir) while cutting."""
    from walkback.journal import journal_path
    from walkback.journal import repair as do_repair
    from walkback.journal.runlock import LOCK_NAME, RunLock

    jpath = journal_path(path)
    if (jpath.parent / LOCK_NAME).exists():
        with RunLock(jpath.parent):
            report = do_repair(jpath)
    else:
        report = do_repair(jpath)
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
            f"{safe(report.path)}: cut a torn tail of {report.truncated_bytes} bytes after lsn "
            f"{report.last_good_lsn}; copy kept as {safe(report.broken_copy)}; "
            f"journal.recovered written as lsn {report.recovered_lsn}"
        )
    else:
        click.echo(f"{safe(report.path)}: intact, nothing to repair")


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path),
              help="Run directory (or .jsonl file) to write.")
@handle_errors
def import_(path: Path, out: Path) -> None:
    """Convert any supported journal or agent log into a hash-chained v1 journal.

    The header names the source format, path and sha256. Unreadable input exits 2.
    """
    from walkback.exporters import exporter
    from walkback.importers import load

    session = load(path, progress=progress_printer("reading"))
    say_verification(path, session)
    written = exporter("journal").export(session, out)
    click.echo(safe(f"{written}: {len(session)} events from {session.format} ({path})"))
