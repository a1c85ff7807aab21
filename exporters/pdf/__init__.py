"""PDF compliance reports that carry their own evidence (``walkback export pdf``).

The report is rendered from the session as the signed bundle carries it: the bundle is made first
(same options), verified, re-imported, and that session is what the report prints, so redacted
content is redacted in the report too and every figure can be checked against the attachment.
The bundle is attached to the PDF/A-3b as an associated file (relationship ``Data``);
``walkback verify REPORT.pdf`` verifies it straight from the report.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from walkback.exporters.base import Option, atomic_output, export_time
from walkback.exporters.bundle import NO_DEFAULT_REDACTION
from walkback.journal.errors import ExportError
from walkback.timeline.session import Session

__all__ = ["EXPORTER", "PdfExporter"]

from .extract import BUNDLE_NAME


class PdfExporter:
    """``walkback export pdf``: a PDF/A-3b report with the session's signed bundle attached."""

    name = "pdf"
    suffix = ".pdf"
    extra = None
    redacts = True
    """Its bundle redacts (``walkback export`` hands it the rules)."""
    options: tuple[Option, ...] = (
        Option(
            "key",
            "Ed25519 private key to sign the attached bundle with (`walkback keygen` makes one).",
            metavar="KEY",
            unset="unsigned: no --key given; the report's cover says it is unsigned",
        ),
        Option(
            "redact",
            "Hide content in the bundle and the report, still verifiable: a field path "
            "(args.content), re:REGEX, or agent:ID (secrets are hidden by default).",
            multiple=True,
            metavar="RULE",
        ),
        NO_DEFAULT_REDACTION,
    )

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        """The report of ``session``; of one opened from a bundle, from its carried files (which
        stay while ``session`` does)."""
        files = session.files()
        if not files:
            raise ExportError("the session was not read from files; nothing to report on")
        v = session.verification
        entry, part = v.reread() if v is not None else (files[0], None)
        return self.export_source(Path(f"{entry}#{part}") if part else entry, out, **options)

    def export_source(self, path: Path, out: Path, **options: Any) -> Path:
        """Bundle the session at ``path``, verify the bundle, and render the report from it."""
        from walkback.exporters.bundle import EXPORTER as BUNDLE
        from walkback.exporters.bundle.keys import TrustedKey, load_private
        from walkback.exporters.bundle.verify import verify

        from walkback import __version__

        from .attest import REPORT_NAME, page_account
        from .render import write_pdf
        from .report import Evidence, build

        created = export_time()
        key = load_private(Path(options["key"])) if options.get("key") else None
        with tempfile.TemporaryDirectory(prefix="walkback-report-") as tmp:
            made = BUNDLE.export_source(Path(path), Path(tmp) / BUNDLE_NAME, **options)
            data = made.read_bytes()
        trust = (
            [TrustedKey(key.public_key(), principals="the key this report was signed with")] if key else None
        )
        v, carried = verify(data, trust=trust, origin=str(path), keep=True)
        if carried is None:
            failed = "; ".join(f"{c.name}: {c.reason}" for c in v.checks if not c.ok)
            raise ExportError(f"the bundle just made does not import again: {failed}", path=path)
        merkle = v.predicate.get("merkle", {})
        evidence = Evidence(
            file_name=BUNDLE_NAME,
            sha256="sha256:" + hashlib.sha256(data).hexdigest(),
            size=len(data),
            signed=key is not None,
            verified=all(c.ok for c in v.checks if not (key is None and c.name in ("signature", "trust"))),
            keyid=v.keyid,
            merkle_root=str(merkle.get("root", "")),
            merkle_size=int(merkle.get("treeSize", 0) or 0),
            checks=[(c.name, c.ok, c.reason) for c in v.checks],
            redactions=v.redactions,
            in_archives=len(v.in_archives),
            created=created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        report = build(
            carried,
            evidence,
            generated=created,
            version=__version__,
            root=v.folder / "root" if v.folder else None,
        )
        with atomic_output(Path(out)) as f:
            write_pdf(
                report,
                data,
                BUNDLE_NAME,
                f,
                created=created,
                account=lambda pdf: (REPORT_NAME, page_account(pdf, data, key, __version__)),
            )
        return Path(out)


EXPORTER = PdfExporter()
