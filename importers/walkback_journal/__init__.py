"""Importer for the reference journal: format v1 and the two seed dialects.

A run directory brings its subagents (``agents/<id>/``) and its archived segments along.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from walkback.journal.blobs import BlobStore
from walkback.journal.errors import BlobError
from walkback.journal.writer import JOURNAL_NAME, journal_path
from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, MustReread
from ._details import details
from ._read import read_journal
from ._vocab import NAME, TYPE_KIND

__all__ = ["IMPORTER", "TYPE_KIND", "WalkbackJournal"]


class WalkbackJournal:
    """walkback's own journal (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return CERTAIN if (path / JOURNAL_NAME).is_file() else NO
        first = head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0]
        if first.startswith(b'{"v":1,'):
            return CERTAIN
        if first.startswith(b"{") and (b'"seq"' in first or (b'"lsn"' in first and b'"type"' in first)):
            return LIKELY
        return LIKELY if path.name == JOURNAL_NAME else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        stores: list[BlobStore] = []
        yield from read_journal(b, journal_path(path), parent=None, spawned_by=None, stores=stores)
        b.interleave = True
        b.session.blob_loader = _blob_loader(stores)

    def extend(self, b: SessionBuilder) -> Iterator[None]:
        """Read what was appended to every live journal file of the session (and the journals of
        subagents spawned meanwhile) into ``b``, which extends the session read before."""
        followed = list(b.session.follow.values())
        if not followed or any(f.torn for f in followed):
            raise MustReread("the last read ended on a torn line: read it again whole")
        for f in followed:
            yield from read_journal(
                b, f.jpath, parent=f.parent, spawned_by=f.spawned_by, stores=f.stores, resume=f
            )

    details = staticmethod(details)


def _blob_loader(stores: list[BlobStore]) -> Callable[[str], bytes | None]:
    def get(name: str) -> bytes | None:
        for s in stores:
            if s.has(name):
                try:
                    return s.get(name)
                except BlobError:
                    return None
        return None

    return get


IMPORTER = WalkbackJournal()
