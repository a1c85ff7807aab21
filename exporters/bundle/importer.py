"""Opening a bundle like any other session: verified first, then read from its carried files.

The carried sources are extracted to a private folder and imported with the importer of their
own format; the session gets the verification (``session.verification``) so the viewer can say
who signed and show where damage starts. The folder lives as long as the session does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.importers.base import CERTAIN, LIKELY, NO
from walkback.journal.errors import SignatureError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import Detail
from walkback.timeline.session import Session

from .container import MEDIA_PREFIX

_MARK = b'"' + MEDIA_PREFIX.encode()


class BundleImporter:
    """A walkback bundle (``walkback export bundle``), or the PDF report that carries one."""

    name = "bundle"

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return NO
        start = head.lstrip()[:200]
        if start.startswith(b'{"mediaType":' + _MARK):
            return CERTAIN
        if head.startswith(b"%PDF-"):  # a report carries its bundle (no other format reads a PDF)
            return LIKELY
        return LIKELY if start.startswith(b"{") and _MARK in head else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        from .keys import default_trust
        from .verify import verify_file

        trust = default_trust()
        v, session = verify_file(path, trust=trust[0] if trust else None, keep=True)
        if session is None:
            bad = next((c for c in v.checks if not c.ok), None)
            raise SignatureError(
                f"cannot open the bundle: {bad.name}: {bad.reason}" if bad else "cannot open the bundle",
                path=path,
            )
        session.format = f"bundle:{session.format}"
        b.session = session  # complete and verified: the builder has nothing left to add
        yield from ()

    def details(self, session: Session, i: int) -> Detail:
        """Never reached: a bundle's session keeps its own format's detail builder."""
        return session.describe(session, i)


IMPORTER = BundleImporter()
