"""Entry point: one click group; each command lives in ``walkback/_cli/<group>.py``."""

from __future__ import annotations

import os
import sys

import click

from walkback import __version__
from walkback._cli import agent as agent_cmds
from walkback._cli import archive as archive_cmds
from walkback._cli import demo as demo_cmds
from walkback._cli import export as export_cmds
from walkback._cli import hooks as hooks_cmds
from walkback._cli import inspect as inspect_cmds
from walkback._cli import recover as recover_cmds
from walkback._cli import sessions as sessions_cmds
from walkback._cli import sign as sign_cmds
from walkback._cli import view as view_cmds


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="walkback")
def cli() -> None:
    """walkback: write-ahead journals for coding agents — record, recover, replay, export."""


cli.add_command(inspect_cmds.show)
cli.add_command(inspect_cmds.check)
cli.add_command(inspect_cmds.import_)
cli.add_command(recover_cmds.recover)
cli.add_command(agent_cmds.agent)
cli.add_command(demo_cmds.demo)
cli.add_command(view_cmds.view)
cli.add_command(sessions_cmds.sessions)
cli.add_command(export_cmds.export)
cli.add_command(hooks_cmds.hooks)
cli.add_command(sign_cmds.keygen)
cli.add_command(sign_cmds.verify)
cli.add_command(archive_cmds.index)
cli.add_command(archive_cmds.search)
cli.add_command(archive_cmds.blame)


def main() -> None:
    if sys.argv[1:2] == ["view"] and not os.environ.get("PYTHONMALLOC") and sys.platform == "linux":
        # the viewer's server on the C allocator, whose freed pages it can give back once tabs
        # close (pymalloc kept +46 MB after 300 page loads, this +11 MB: walkback.viewer.tuning)
        os.environ["PYTHONMALLOC"] = "malloc"
        os.execv(sys.executable, [sys.executable, "-m", "walkback", *sys.argv[1:]])
    cli(prog_name="walkback")
