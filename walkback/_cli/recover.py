"""``walkback recover RUN|JOURNAL|SESSION [--workspace DIR] [--apply] [--json]``: crash recovery.

A walkback run or journal goes to ``journal.recovery``; a hooked agent session to the same recovery
of its hook journal (``timeline.postmortem.recover_hooked``); any other agent's session (what an
importer reads) gets a postmortem (``timeline.postmortem``): its unfinished tool calls classified
against the workspace, and with ``--apply`` the idempotent ones redone, each decision journaled in
a walkback journal beside the session.
"""

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


def _foreign(path: Path) -> bool:
    """The path is another agent's session, not a walkback run or journal."""
    from walkback.importers import detect, split_part
    from walkback.journal.errors import WalkbackError

    if not split_part(path)[0].exists():
        return False
    try:
        return detect(path).name != "walkback"
    except WalkbackError:
        return False  # journal recovery says what is wrong with it


def _postmortem(path: Path, workspace: Path | None, apply_: bool) -> Any:
    from walkback.importers import load
    from walkback.journal.errors import RecoveryError
    from walkback.timeline import postmortem

    session = load(path)
    if session.hooked is not None:  # the hook journal recorded every call: walkback's own recovery
        return postmortem.recover_hooked(session, source=str(path), workspace=workspace, apply=apply_)
    ws, named = workspace, "given"
    if ws is None:
        recorded = postmortem.recorded_workspace(session)
        if not recorded:
            raise RecoveryError("the session records no workspace; pass --workspace DIR", path=path)
        ws, named = Path(recorded), "recorded by the session"
    if not ws.is_dir():
        raise RecoveryError(f"workspace {ws} ({named}) is not a directory; pass --workspace DIR", path=path)
    pm = postmortem.analyze(session, ws, source=str(path))
    if apply_ and pm.findings:
        pm = postmortem.apply(pm, postmortem.beside(path))
    return pm


def _rows(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    rows = [header, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def _table(plan: Any) -> str:
    from walkback.journal.recovery._brief import clean
    from walkback.timeline.postmortem import HookedRecovery, Postmortem

    if isinstance(plan, HookedRecovery):
        return _rows(
            ("LSN", "CALL", "TOOL", "TARGET", "FINDING", "ACTION"),
            [
                (str(f.lsn), clean(f.call, 40), clean(f.tool, 20), clean(f.target, 48), f.finding, f.action)
                for f in plan.all_findings()
            ],
        )
    if isinstance(plan, Postmortem):
        return _rows(
            ("STEP", "CALL", "TOOL", "TARGET", "FINDING", "ACTION"),
            [
                (str(f.step), str(f.call), clean(f.tool, 20), clean(f.target, 48), f.finding, f.action)
                for f in plan.findings
            ],
        )
    return _rows(
        ("AGENT", "LSN", "TOOL", "TARGET", "FINDING", "ACTION"),
        [
            (clean(f.agent, 24), str(f.lsn), clean(f.tool, 20), clean(f.target, 48), f.finding, f.action)
            for f in plan.all_findings()
        ],
    )


@click.command()
@click.argument("run", metavar="RUN|JOURNAL|SESSION")
@click.option(
    "--workspace",
    type=click.Path(path_type=Path, file_okay=False),
    help="The working tree the run edits (default: the journal header's `workspace`, or the directory the"
    " session recorded).",
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

    A hooked session (a transcript whose hook journal walkback wrote while it ran, docs/hooks.md) is
    recovered exactly from that journal, as a run is: every finding names the agent's call id, and
    the decisions are journaled in the hook journal.

    Another agent's session (Claude Code, Codex, Aider, Cline ...) gets a postmortem: each tool call
    without a result is classified against the workspace (applied, not applied, torn, in doubt);
    with --apply a not-applied edit, write or patch is redone from the recorded text and every
    decision is journaled in SESSION.walkback/journal.jsonl, never in the agent's own file.

    Exit 0 when nothing is left for a human, 3 when a finding needs one (an effect in doubt, an
    approval to ask again), 1 when recovery cannot proceed, 2 on unusable input, 4 when a write failed
    (one line naming the file, after every other call got its decision).
    """
    if _foreign(Path(run)):
        plan = _postmortem(Path(run), workspace, apply_)
    else:
        from walkback.journal.recovery import recover as do_recover

        plan = do_recover(_journal(run), workspace=workspace, apply=apply_)
    if as_json:
        emit_json(plan.to_json())
    else:
        if plan.all_findings():
            click.echo(_table(plan))
            click.echo()
        click.echo(plan.brief)
    from walkback.journal.errors import WriteFailed
    from walkback.timeline.postmortem import Postmortem

    failed = plan.write_errors if isinstance(plan, Postmortem) else []
    if failed:  # each redo was tried, and its decision journaled, before this one line
        more = f" (and {len(failed) - 1} more write(s) failed)" if len(failed) > 1 else ""
        raise WriteFailed(failed[0] + more)
    sys.exit(NEEDS_HUMAN if plan.needs_human else 0)
