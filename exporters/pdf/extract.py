"""The signed bundle attached to a report, read back out of the PDF (``walkback verify REPORT.pdf``)."""

from __future__ import annotations

from pathlib import Path

from walkback.journal.errors import UnusableJournal

BUNDLE_NAME = "walkback-bundle.json"
"""The attachment's name in a walkback report."""


class UnusableReport(UnusableJournal):
    """A PDF that is not a walkback report carrying a bundle (exit code 2)."""


def attached_bundle(path: Path) -> bytes:
    """The bytes of the bundle attached to the report at ``path``.

    Raises:
        UnusableReport: the PDF cannot be read or carries no walkback bundle.
    """
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # what is wrong is said in one Error line
    try:
        attachments = PdfReader(path).attachments
    except (OSError, PdfReadError, ValueError, KeyError, TypeError) as e:
        raise UnusableReport(f"not a readable PDF: {e}", path=path) from None
    found = attachments.get(BUNDLE_NAME) or next(
        (v for k, v in attachments.items() if k.endswith(".json")), None
    )
    if not found:
        raise UnusableReport("the PDF carries no walkback bundle (no JSON attachment)", path=path)
    return bytes(found[0])
