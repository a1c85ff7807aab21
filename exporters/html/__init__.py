"""The HTML replay (``walkback export html``): one self-contained file a reviewer opens by double
click, that steps through the session like the viewer and still proves itself.

The page carries the session's signed bundle (redacted the bundle's way), renders each step from
it with the viewer's own step card, and is sealed (:mod:`.seal`) so that ``walkback verify
review.html`` fails on a change to any of its bytes. The design is in ``docs/handoff.md``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from walkback.exporters.base import Option, atomic_output
from walkback.exporters.bundle import NO_DEFAULT_REDACTION, REDACT
from walkback.journal.errors import ExportError
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
        files = session.files()
        if not files:
            raise ExportError("the session was not read from files; nothing to replay")
        return self.export_source(files[0], out, **options)

    def export_source(self, path: Path, out: Path, **options: Any) -> Path:
        """Bundle the session at ``path``, verify and re-import the bundle, render the page from it."""
        from walkback.exporters.bundle import EXPORTER as BUNDLE
        from walkback.exporters.bundle.keys import TrustedKey, load_private
        from walkback.exporters.bundle.verify import verify

        from .page import page
        from .seal import seal
        from .view import view_data

        key = load_private(Path(options["key"])) if options.get("key") else None
        with tempfile.TemporaryDirectory(prefix="walkback-replay-") as tmp:
            data = BUNDLE.export_source(Path(path), Path(tmp) / "bundle.json", **options).read_bytes()
        trust = (
            [TrustedKey(key.public_key(), principals="the key this replay was signed with")] if key else None
        )
        v, carried = verify(data, trust=trust, origin=str(path), keep=True)
        if carried is None:
            failed = "; ".join(f"{c.name}: {c.reason}" for c in v.checks if not c.ok)
            raise ExportError(f"the bundle just made does not import again: {failed}", path=path)
        merkle = v.predicate.get("merkle", {})
        signed = key is not None
        checks = [
            (c.name, c.ok, c.reason) for c in v.checks if signed or c.name not in ("signature", "trust")
        ]
        head = {
            "task": carried.task,
            "format": carried.format,
            "status": carried.status + (" · recovered" if carried.recovered else ""),
            "integrity": carried.integrity.badge,
            "verified": all(ok for _, ok, _ in checks),
            "verification": (f"signed by {v.keyid}; " if signed else "unsigned; ")
            + f"Merkle root {merkle.get('root', '')} over {merkle.get('treeSize', 0)} lines; "
            "check this file: walkback verify FILE --key PUB",
            "checks": checks,
            "redactions": v.redactions,
        }
        view = view_data(carried, v.folder / "root" if v.folder else None, head)
        body = page(str(head["task"]), view, data)
        with atomic_output(Path(out)) as f:
            f.write(seal(body, key) if key is not None else body)
        return Path(out)


EXPORTER = HtmlExporter()
