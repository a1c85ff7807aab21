"""``walkback demo``: the README's main command (logic in :mod:`agent.demo`)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

from .common import handle_errors


@click.command()
@click.option(
    "--no-open", is_flag=True, help="Do not start the viewer at the end (print how to); for scripts and CI."
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Work here (a new or empty directory) instead of a temporary one.",
)
@click.pass_context
@handle_errors
def demo(ctx: click.Context, no_open: bool, directory: Path | None) -> None:
    """Scratch repo, multi-agent run, kill -9 mid-task, recover, finish, then open the viewer on the run."""
    from walkback.agent.demo import run_demo

    base = directory or Path(tempfile.mkdtemp(prefix="walkback-demo-"))
    result = run_demo(base, emit=lambda line: click.echo(line, err=True))
    click.echo(f"demo finished in {result.seconds:.1f}s: run {result.status}, journal in {result.run_dir}")
    if result.status != "completed" or any(n != 1 for n in result.effects_by_key.values()):
        raise click.ClickException(
            f"the demo did not end as it should (status {result.status}, effects {result.effects_by_key})"
        )
    run_dir, ws = str(result.run_dir), str(result.workspace)
    show = subprocess.run(_walkback("show", run_dir), capture_output=True, text=True, check=False)
    click.echo(show.stdout.rstrip())
    click.echo(f"run directory: {run_dir}  (workspace: {ws})")
    root = ctx.find_root().command
    if not isinstance(root, click.Group) or root.get_command(ctx, "view") is None:
        return
    if no_open:
        click.echo(f"to replay it: walkback view {run_dir} --workspace {ws}")
        return
    click.echo("opening the viewer (Ctrl+C to stop)", err=True)
    sys.exit(subprocess.call(_walkback("view", run_dir, "--workspace", ws)))


def _walkback(*args: str) -> list[str]:
    return [sys.executable, "-m", "walkback", *args]
