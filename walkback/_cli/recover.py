"""``walkback recover RUN|JOURNAL [--workspace DIR] [--apply] [--json]``: crash recovery."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import emit_json, handle_errors, json_option

NEEDS_HUMAN = 3
"""Exit code when a finding is left for a human (the same 3 as a run stopped on an approval)."""


def _journal(run: str) -> Path:
    """A journal file or run directory as given, else a run id under the runs root."""
    p = Path(run)
    if p.exists() or p.is_symlink():
        return p  # whatever it is: recovery says what is wrong with it
    from walkback.agent.runs import find_run

    return find_run(run)


def _table(plan: Any) -> str:
    from walkback.journal.recovery._brief import clean

    rows = [("AGENT", "LSN", "TOOL", "TARGET", "FINDING", "ACTION")]
    rows += [
        (clean(f.agent, 24), str(f.lsn), clean(f.tool, 20), clean(f.target, 48), f.finding, f.action)
        for f in plan.all_findings()
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


@click.command()
@click.argument("run", metavar="RUN|JOURNAL")
@click.option(
    "--workspace",
    type=click.Path(path_type=Path, file_okay=False),
    help="The working tree the run edits (default: the journal header's `workspace`).",
)
@click.option("--apply", "apply_", is_flag=True, help="Repair, journal each decision, then act on it.")
@json_option
@handle_errors
def recover(run: str, workspace: Path | None, apply_: bool, as_json: bool) -> None:
    """Classify every unfinished intent of a crashed run against its workspace.

    Without --apply nothing is changed. With it: a torn tail is cut, each decision is journaled
    (fsynced) before it is acted on, end-state file intents are restored/redone and committed
    when their post hash verifies, keyed external calls are reissued with the same key, and
    whatever is in doubt is left to a human. Running it twice changes nothing the second time.

    Exit 0 when nothing is left for a human, 3 when a finding needs one (an effect in doubt, an
    approval to ask again), 1 when recovery cannot proceed, 2 on unusable input.
    """
    from walkback.journal.recovery import recover as do_recover

    plan = do_recover(_journal(run), workspace=workspace, apply=apply_)
    if as_json:
        emit_json(plan.to_json())
    else:
        if plan.all_findings():
            click.echo(_table(plan))
            click.echo()
        click.echo(plan.brief)
    sys.exit(NEEDS_HUMAN if plan.needs_human else 0)
