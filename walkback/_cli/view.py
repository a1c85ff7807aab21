"""``walkback view [PATH...]``: the replay viewer in the browser (or a desktop window)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import handle_errors, say_verification


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on; any other than loopback requires the printed token.",
)
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535))
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
@click.option("--native", is_flag=True, help="Open a desktop window (needs the `native` extra: pywebview).")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Working tree to compare post hashes with (the file now and at git HEAD).",
)
@click.option(
    "--archive",
    "with_archive",
    is_flag=True,
    help="Open on the archive's home page (`walkback index` builds it).",
)
@click.option(
    "--db", "url", default=None, help="The archive to open [default: $WALKBACK_HOME/archive.sqlite]."
)
@handle_errors
def view(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    no_open: bool,
    native: bool,
    workspace: Path | None,
    with_archive: bool,
    url: str | None,
) -> None:
    """Replay journals, run dirs, or a folder of runs step by step in the browser.

    Without PATH: the sessions ``walkback sessions`` finds on this machine. Input that is not a
    session fails at once, with the line and exit code ``walkback show`` gives. ``--archive``:
    search, facets, sessions and a dashboard over every indexed session, each hit opening its step.
    """
    from walkback.journal.recovery import analyze
    from walkback.viewer.app import serve
    from walkback.viewer.security import needs_token, new_token

    archive = None
    if with_archive or url:
        from walkback.importers.archive.store import Archive

        archive = Archive.open(url, create=False)
    serve(
        usable(paths) if paths or archive else on_this_machine(),
        host=host,
        port=port,
        open=not no_open,
        native=native,
        workspace=workspace,
        token=new_token() if needs_token(host) else None,
        analyzer=analyze,
        announce=lambda url: click.echo(f"walkback viewer: {url}  (Ctrl+C to stop)", err=True),
        archive=archive,
    )


def on_this_machine() -> list[Path]:
    """The sessions the agents left where they keep them, newest first (``walkback sessions``)."""
    from walkback.importers.discovery import find_sessions

    found = [s.path for s in find_sessions()]
    if not found:
        raise click.UsageError("no sessions found on this machine (`walkback sessions --help`); give a PATH")
    return found


def usable(paths: tuple[Path, ...]) -> list[Path]:
    """The sessions ``paths`` hold, checked before any server starts.

    A file or run directory given by name is read up to its first chunk, so what ``walkback show``
    would refuse (not a session, an unknown version, a FIFO) is refused here with the same line; a
    folder of runs must hold at least one (found below it too, see ``viewer.store.discover``).

    Raises:
        WalkbackError: as ``walkback show`` on the same input.
    """
    from walkback.importers import detect, load, load_chunks
    from walkback.viewer.store import discover

    out: list[Path] = []
    for p in paths:
        found = discover([p], detect)
        if found == [p] and detect(p).name == "bundle":  # read whole to be verified: say the result
            say_verification(p, load(p))
        elif found == [p]:
            chunks = load_chunks(p)
            try:
                next(chunks)
            finally:
                chunks.close()
        elif not found:
            detect(p)  # raises what `show` says about this folder
        out += found
    return out
