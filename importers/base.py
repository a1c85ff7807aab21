"""The Importer contract: the protocols an importer implements and the scores it detects with.

An importer is the mapping from one format to timeline events and nothing else: the
:class:`~walkback.timeline.builder.SessionBuilder` it is handed owns interning, columns, chunks,
pairing, agents and the count of skipped records. What importers share to read their records lives
beside this module: :mod:`.records` (files: lines, JSON lines, documents), :mod:`.fields` (values
inside a record a model wrote) and :mod:`.diffs` (unified diffs cut per file).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import Detail
from walkback.timeline.session import Session

HEAD_BYTES = 65536
"""Bytes of a file's start that detection looks at."""

# Detection scores: an importer says how sure it is; the highest wins (ties are an error).
NO = 0
WEAK = 10
"""Only the name or the extension fits."""
LIKELY = 50
"""The structure fits (the right container, the right top-level keys)."""
CERTAIN = 100
"""A field only this format writes (a header type, a version key)."""


@runtime_checkable
class Importer(Protocol):
    """One source format. Register it through the ``register_importers`` plugin hook."""

    name: str
    """What ``show --json`` calls the format (``claude-code``, ``codex``, ``walkback`` ...)."""

    def score(self, path: Path, head: bytes) -> int:
        """How sure this importer is that ``path`` is its format: :data:`NO` … :data:`CERTAIN`.

        ``head`` is the file's first :data:`HEAD_BYTES` (empty for a directory). Look, don't parse
        the whole file; never raise.
        """
        ...

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        """Read ``path`` into ``b``, yielding whenever ``b.due()`` (a viewer shows the session so
        far); raise :class:`ImporterError` with the file and line for input it cannot read.

        ``part`` selects one session of a file that holds several (see :meth:`parts`)."""
        ...

    def details(self, session: Session, i: int) -> Detail:
        """The typed detail of event ``i`` of a session this importer read (from its raw record)."""
        ...


class MustReread(Exception):
    """An importer cannot extend a session with what its sources appended (a file was replaced
    or rewritten, a torn line was completed): the session must be read again whole."""


@runtime_checkable
class Follows(Protocol):
    """An importer that can read what its sources appended since a session was read (live follow
    at the cost of the new bytes)."""

    def extend(self, b: SessionBuilder) -> Iterator[None]:
        """Append the new events to ``b`` (which extends the session), yielding as ``read`` does.

        Raises:
            MustReread: the session must be read again whole.
        """
        ...


@runtime_checkable
class MultiSession(Protocol):
    """An importer whose files can hold several sessions (Inspect: one per sample)."""

    def parts(self, path: Path) -> list[str]:
        """The names of the sessions in ``path`` (empty: the file is one session)."""
        ...


def head(path: Path) -> bytes:
    """The first bytes detection looks at (empty for a directory or an unreadable file)."""
    if path.is_dir():
        return b""
    try:
        with open(path, "rb") as f:
            return f.read(HEAD_BYTES)
    except OSError:
        return b""
