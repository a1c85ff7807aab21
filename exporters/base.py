"""The Exporter contract and the one way an export writes its output (atomically).

An exporter turns a :class:`~walkback.timeline.session.Session` into a file. Heavy imports (the
PDF renderer, pyarrow, OpenTelemetry) happen inside ``export``, so ``walkback --help`` and the
viewer never pay for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from walkback.journal.errors import ExportError
from walkback.journal.fileops import atomic_file
from walkback.timeline.session import Session


@dataclass(frozen=True)
class Option:
    """An exporter-specific option; the CLI makes a ``--name`` flag of it (library code stays
    free of click)."""

    name: str
    """The option's name (``endpoint`` becomes ``--endpoint``)."""
    help: str
    multiple: bool = False
    """May be given several times (a list reaches ``export``)."""
    flag: bool = False
    """A switch without a value."""
    metavar: str = "VALUE"
    unset: str = ""
    """What the CLI warns (on stderr) when the option is not given (``unsigned: no --key``)."""


@runtime_checkable
class Exporter(Protocol):
    """One output format. Register it through the ``register_exporters`` plugin hook."""

    name: str
    """The ``walkback export NAME`` word (``bundle``, ``pdf``, ``otlp``, ``csv``, ``parquet``)."""
    suffix: str
    """The usual file suffix of the output (``.json``, ``.pdf``)."""
    extra: str | None
    """The pip extra whose packages ``export`` imports, if any (said in the error when missing)."""
    options: tuple[Option, ...]
    """Options beyond the output path."""
    # An exporter whose output is not a file (otlp --endpoint) sets ``needs_output = False``.

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        """Write ``session`` to ``out`` (atomically) and return the path written."""
        ...


@runtime_checkable
class SourceExporter(Protocol):
    """An exporter that works from the source files rather than the timeline (the signed bundle):
    ``walkback export`` hands it the path as given, so it knows the address (``file#part``) to
    re-import."""

    def export_source(self, path: Path, out: Path, **options: Any) -> Path:
        """Write the session at ``path`` to ``out`` (atomically) and return the path written."""
        ...


@runtime_checkable
class ManyExporter(Protocol):
    """An exporter that writes several sessions into one output (a Parquet dataset, one CSV):
    ``walkback export`` hands it every session of a folder given as PATH."""

    def export_many(self, sessions: Iterable[Session], out: Path, **options: Any) -> Path:
        """Write ``sessions`` (read one at a time, never all held) to ``out``; return it."""
        ...


@contextmanager
def atomic_output(path: Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """A file to write ``path``'s new content into: a crash or an exception leaves the old content
    (or nothing), never a half-written file (:func:`~walkback.journal.fileops.atomic_file`: a temp
    file beside ``path``, fsynced and renamed; the temp files a killed export left are removed
    first). An error names ``path``.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ExportError("the output's folder does not exist", path=parent)
    if path.is_dir():
        raise ExportError("the output is a directory", path=path)
    with atomic_file(path, sweep=True) as fd, os.fdopen(fd, mode, closefd=False) as f:
        yield f


def refuse_own_input(out: Path | None, inputs: Iterable[Path]) -> None:
    """Refuse an output that would overwrite what the export reads (exit 1, nothing written);
    ``out`` None (an export pushed to a server, not written) overwrites nothing.

    ``out`` is refused when it is one of ``inputs`` (by resolved path, or the same file through a
    hard or symbolic link), lies inside an input folder (a run directory, a folder of sessions), or
    is a folder that holds an input (a Parquet dataset written over its sources).

    Raises:
        ExportError: naming the output and the input it would overwrite.
    """
    if out is None:
        return
    target = Path(out).resolve()
    try:
        st = os.stat(target)
    except OSError:
        st = None
    from walkback.importers import split_part

    sources = [split_part(Path(given))[0].resolve() for given in inputs]
    for source in sources:
        same = st is not None and source.exists() and os.path.samestat(st, os.stat(source))
        if same or target == source:
            raise ExportError(f"the output is the input {source}: refused (it would overwrite it)", path=out)
    for source in sources:
        if source.is_dir() and source in target.parents:
            raise ExportError(f"the output is inside the input folder {source}: refused", path=out)
        if target in source.parents:
            raise ExportError(f"the output folder holds the input {source}: refused", path=out)


def export_time() -> datetime:
    """When an export says it was made: ``SOURCE_DATE_EPOCH`` when set (reproducible builds: the
    same session and options then give byte-identical bundles and reports), else now."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), UTC)
        except (ValueError, OverflowError, OSError):
            raise ExportError(f"SOURCE_DATE_EPOCH is not a number of seconds: {epoch!r}") from None
    return datetime.now(UTC).replace(microsecond=0)


def need(module: str, extra: str, name: str) -> Any:
    """Import ``module`` for exporter ``name``, or say which extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExportError(f"the {name} export needs {module}: pip install 'walkback[{extra}]'") from None
