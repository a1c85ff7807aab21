"""The HTML replay (``walkback export html``): one self-contained file a reviewer opens by double
click, that steps through the session like the viewer and still proves itself.

The page carries the session's signed bundle (redacted the bundle's way), renders each step from
it with the viewer's own step card, and is sealed (:mod:`.seal`) so that ``walkback verify
review.html`` fails on a change to any of its bytes. The design is in ``docs/handoff.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from walkback.exporters.base import Option, atomic_output
from walkback.exporters.bundle import NO_DEFAULT_REDACTION, REDACT
from walkback.timeline.session import Session

__all__ = ["EXPORTER", "HtmlExporter"]


class HtmlExporter:
    """``walkback export html``: a self-contained, sealed HTML replay of the session for review."""

    name = "html"
    suffix = ".html"
    extra = None
    redacts = True
    """Its bundle redacts (``walkback export`` hands it the rules)."""
    options: tuple[Option, ...] = (
        Option(
            "key",
            "Ed25519 private key to sign the bundle and seal the page with (`walkback keygen`).",
            metavar="KEY",
            unset="unsigned: no --key given; `walkback verify` will report the replay as unsigned",
        ),
        REDACT,
        NO_DEFAULT_REDACTION,
    )

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        return self._write(session, out, options)

    def export_source(self, path: Path, out: Path, **options: Any) -> Path:
        return self._write(Path(path), out, options)

    def _write(self, source: Path | Session, out: Path, options: dict[str, Any]) -> Path:
        """Bundle the session, verify and re-import the bundle, render the page from it."""
        from walkback.exporters.handoff import bundled

        from .page import page
        from .seal import seal
        from .view import view_data

        b = bundled(source, options)
        s = b.session
        checks = b.checks()
        head = {
            "task": s.task,
            "format": s.format,
            "status": s.status + (" · recovered" if s.recovered else ""),
            "integrity": s.integrity.badge,
            "verified": all(ok for _, ok, _ in checks),
            "verification": f"{b.line()}; check this file: walkback verify FILE --key PUB",
            "checks": checks,
            "redactions": b.verification.redactions,
        }
        body = page(s.task, view_data(s, b.root, head), b.data)
        with atomic_output(Path(out)) as f:
            f.write(seal(body, b.key) if b.key is not None else body)
        return Path(out)


EXPORTER = HtmlExporter()
