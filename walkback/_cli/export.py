"""``walkback export NAME PATH -o OUT``: one subcommand per registered exporter.

The subcommands come from the exporter registry (built-ins and plugins alike), each exporter's
:class:`~walkback.exporters.Option` becoming a flag; they are built only when the group is used,
so ``walkback --help`` imports no exporter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .common import handle_errors, progress_printer, safe

MANY_HELP = " A folder of sessions as PATH: several sessions in one output."


class ExportGroup(click.Group):
    """A group whose commands are the registered exporters."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from walkback.exporters import exporters

        return sorted(exporters())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from walkback.exporters import exporters

        found = exporters().get(cmd_name)
        return command_for(found) if found is not None else None


def command_for(exp: Any) -> click.Command:
    """The ``walkback export <name>`` command of one exporter."""
    from walkback.exporters import ManyExporter

    @handle_errors
    def run(path: Path, out: Path | None, **options: Any) -> None:
        from walkback.exporters import ManyExporter, SourceExporter
        from walkback.importers import detect, load
        from walkback.viewer.store import discover

        given = {k: v for k, v in options.items() if v not in (None, (), False)}
        for opt in exp.options:
            if opt.unset and opt.name.replace("-", "_") not in given:
                click.echo(f"walkback export {exp.name}: {opt.unset}", err=True)
        kwargs = {
            o.name: given[o.name.replace("-", "_")] for o in exp.options if o.name.replace("-", "_") in given
        }
        many = discover([path], detect) if isinstance(exp, ManyExporter) and path.is_dir() else [path]
        if many != [path]:  # a folder of sessions
            if not many:
                detect(path)  # says why this folder holds none
            written = exp.export_many((load(p, measure=True) for p in many), out, **kwargs)
        elif isinstance(exp, SourceExporter):
            if out is None:  # only an exporter with needs_output = False may leave -o out
                raise click.UsageError("-o/--output is required")
            written = exp.export_source(path, out, **kwargs)
        else:
            written = exp.export(
                load(path, progress=progress_printer("reading"), measure=True), out, **kwargs
            )
        click.echo(safe(f"{written}: {exp.name} export of {path}"))

    params: list[click.Parameter] = [
        click.Argument(["path"], type=click.Path(path_type=Path)),
        click.Option(
            ["-o", "--output", "out"],
            required=getattr(exp, "needs_output", True),
            type=click.Path(path_type=Path),
            help=f"File to write (usually *{exp.suffix}); written atomically."
            + (MANY_HELP if isinstance(exp, ManyExporter) else ""),
        ),
    ]
    for opt in exp.options:
        params.append(
            click.Option(
                [f"--{opt.name}"],
                help=opt.help,
                multiple=opt.multiple,
                is_flag=opt.flag,
                metavar=None if opt.flag else opt.metavar,
            )
        )
    doc = (type(exp).__doc__ or f"The {exp.name} export.").strip()
    doc = doc.split(": ", 1)[1] if doc.startswith("``") and ": " in doc else doc  # drop ``walkback ...``:
    return click.Command(exp.name, callback=run, params=params, help=doc, short_help=doc.splitlines()[0][:80])


@click.group(cls=ExportGroup)
def export() -> None:
    """Write a session (any journal, run dir or agent log) in another format: signed bundle, PDF
    report, OTLP, CSV, Parquet. `walkback export NAME --help` lists NAME's options."""
