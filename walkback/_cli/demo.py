"""``walkback demo``: the README's main command (logic in :mod:`agent.demo`)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

from .common import handle_errors


@click.command()
@click.option("--no-open", is_flag=True, help="Do not open a browser on the run at the end.")
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
    from agent.demo import run_demo

    base = directory or Path(tempfile.mkdtemp(prefix="walkback-demo-"))
    result = run_demo(base, emit=lambda line: click.echo(line, err=True))
    click.echo(f"demo finished in {result.seconds:.1f}s: run {result.status}, journal in {result.run_dir}")
    if result.status != "completed" or any(n != 1 for n in result.effects_by_key.values()):
        raise click.ClickException(
            f"the demo did not end as it should (status {result.status}, effects {result.effects_by_key})"
        )
    root = ctx.find_root().command
    if isinstance(root, click.Group) and root.get_command(ctx, "view") is not None:
        args = [sys.executable, "-m", "walkback", "view", str(result.run_dir)] + (
            ["--no-open"] if no_open else []
        )
        click.echo(f"opening the viewer: walkback view {result.run_dir}", err=True)
        sys.exit(subprocess.call(args))
    show = subprocess.run(
        [sys.executable, "-m", "walkback", "show", str(result.run_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    click.echo(show.stdout.rstrip())
    click.echo(f"run directory: {result.run_dir}  (workspace: {result.workspace})")
