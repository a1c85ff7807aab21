"""``walkback export NAME PATH -o OUT``: one subcommand per registered exporter.

The subcommands come from the exporter registry (built-ins and plugins alike), each exporter's
:class:`~walkback.exporters.Option` becoming a flag; they are built only when the group is used,
so ``walkback --help`` imports no exporter.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from .common import handle_errors, progress_printer, safe, say_verification

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


def say_redacted(redactions: list[dict[str, Any]]) -> None:
    """The redaction report, on stderr (counts by rule), when anything was hidden."""
    from walkback.exporters.bundle.secrets import report

    if redactions:
        click.echo(safe(f"walkback export: {report(redactions)}"), err=True)


def redacted_each(paths: list[Path], rules: list[Any]) -> Iterator[Any]:
    """The sessions at ``paths``, each read and redacted as it is asked for (one held at a time)."""
    from walkback.exporters.redacted import redacted
    from walkback.importers import load

    for p in paths:
        with redacted(load(p, measure=True), rules, entry=p, measure=True) as (copy, found):
            say_redacted(found)
            yield copy


def command_for(exp: Any) -> click.Command:
    """The ``walkback export <name>`` command of one exporter."""
    from walkback.exporters import ManyExporter
    from walkback.exporters.bundle import NO_DEFAULT_REDACTION

    @handle_errors
    def run(path: Path, out: Path | None, **options: Any) -> None:
        from walkback.exporters import ManyExporter, SourceExporter, refuse_own_input
        from walkback.exporters.bundle.secrets import rules_of
        from walkback.exporters.redacted import redacted
        from walkback.importers import detect, load
        from walkback.viewer.store import discover

        given = {k: v for k, v in options.items() if v not in (None, (), False)}
        for opt in exp.options:
            if opt.unset and opt.name.replace("-", "_") not in given:
                click.echo(f"walkback export {exp.name}: {opt.unset}", err=True)
        kwargs = {
            o.name.replace("-", "_"): given[o.name.replace("-", "_")]
            for o in exp.options
            if o.name.replace("-", "_") in given
        }
        itself = getattr(exp, "redacts", False)  # it redacts while it snapshots (bundle, pdf, html)
        rules = [] if itself else rules_of(given)
        if itself:
            kwargs["on_redactions"] = say_redacted
        many = discover([path], detect) if isinstance(exp, ManyExporter) and path.is_dir() else [path]
        if many != [path]:  # a folder of sessions
            if not many:
                detect(path)  # says why this folder holds none
            refuse_own_input(out, [path, *many])
            written = exp.export_many(redacted_each(many, rules), out, **kwargs)
        elif isinstance(exp, SourceExporter) and detect(path).name != "bundle":  # a bundle: its session
            if out is None:  # only an exporter with needs_output = False may leave -o out
                raise click.UsageError("-o/--output is required")
            refuse_own_input(out, [path])
            written = exp.export_source(path, out, **kwargs)
        else:
            session = load(path, progress=progress_printer("reading"), measure=True)
            say_verification(path, session)
            if out is not None:
                refuse_own_input(out, [path, *session.files()])
            with redacted(session, rules, entry=path, measure=True) as (copy, found):
                if not itself:
                    say_redacted(found)
                written = exp.export(copy, out, **kwargs)
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
    own = [] if any(o.name == NO_DEFAULT_REDACTION.name for o in exp.options) else [NO_DEFAULT_REDACTION]
    for opt in [*exp.options, *own]:
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
