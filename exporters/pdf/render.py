"""HTML to PDF/A-3b with the bundle attached, offline and reproducibly.

Jinja2 autoescapes everything the template prints; WeasyPrint may fetch only the report's own
files (stylesheet, fonts) below ``static/``: no network, no other file, whatever a log contains.
The same report and date give the same bytes: dates come from the caller, the PDF identifier is
derived from the content, and the one font is shipped with walkback.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from .chart import timeline_svg
from .report import Report

STATIC = Path(__file__).resolve().parents[2] / "static"
"""``static/`` beside the parts in the repository, ``walkback/static`` once installed."""
TEMPLATES = STATIC / "report"
SECTIONS = (
    ("summary", "1. Summary"),
    ("agents", "2. Agents and timeline"),
    ("changes", "3. File changes"),
    ("commands", "4. Commands"),
    ("approvals", "5. Approvals"),
    ("recovery", "6. Crash and recovery"),
    ("integrity", "7. Integrity and verification"),
    ("redactions", "8. Redactions"),
    ("methods", "9. Methods: how this evidence was produced and how to verify it"),
)
PDF_VARIANT = "pdf/a-3b"


def html(report: Report, created: datetime) -> str:
    """The report as one HTML document (every value escaped)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["j2", "html"]))
    return env.get_template("report.html.j2").render(
        r=report,
        sections=SECTIONS,
        chart=Markup(timeline_svg(report.lanes, report.span)),  # built and escaped in chart.py
        created_iso=created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def _fetcher() -> Any:
    from weasyprint.urls import URLFetcher

    root = STATIC.resolve()

    class LocalOnly(URLFetcher):
        """Serves the report's own stylesheet and fonts; refuses everything else."""

        def fetch(self, url: str, headers: Any = None) -> Any:
            if not url.startswith("file://"):
                raise ValueError(f"the report loads no remote resource: {url[:80]}")
            path = Path(url.removeprefix("file://").split("?")[0]).resolve()
            if path != root and root not in path.parents:
                raise ValueError(f"the report loads only its own files: {url[:80]}")
            return super().fetch(url, headers)

    return LocalOnly(allowed_protocols=["file"])


def write_pdf(
    report: Report,
    bundle: bytes,
    bundle_name: str,
    out: IO[bytes],
    *,
    created: datetime,
    account: Callable[[bytes], tuple[str, bytes]] | None = None,
) -> None:
    """Render ``report`` as PDF/A-3b into ``out`` with ``bundle`` attached (relationship Data).

    ``account(pdf)`` is given the PDF without attachments and returns ``(name, bytes)`` of a second
    attachment that accounts for its pages (:mod:`.attest`); the layout is made once and written
    twice, so the pages it accounts for are the ones written.
    """
    from weasyprint import HTML

    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    doc = html(report, created)
    files = [(bundle, bundle_name, "walkback signed bundle: the evidence this report describes")]
    identifier = hashlib.sha256(doc.encode() + hashlib.sha256(bundle).digest()).hexdigest()[:32].encode()
    options: dict[str, Any] = {"pdf_variant": PDF_VARIANT, "pdf_identifier": identifier}
    laid_out = HTML(string=doc, base_url=str(TEMPLATES) + "/", url_fetcher=_fetcher()).render(
        presentational_hints=False, **options
    )
    if account is not None:
        # attachments and compression do not enter the pages digest: the cheapest write to take it
        name, data = account(laid_out.write_pdf(attachments=[], uncompressed_pdf=True, **options))
        files.append((data, name, "walkback: the signed digest of this report's pages"))
    laid_out.write_pdf(out, attachments=_attachments(files, created), **options)


def _attachments(files: list[tuple[bytes, str, str]], created: datetime) -> list[Any]:
    """WeasyPrint attachments (each can be written once) of ``(data, name, description)``."""
    from weasyprint import Attachment

    return [
        Attachment(
            string=data, name=name, description=text, created=created, modified=created, relationship="Data"
        )
        for data, name, text in files
    ]
