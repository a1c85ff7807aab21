"""The PDF report of a big session against the time to load the same session.

(1) ``walkback export pdf`` of a 100,000-event journal (bundle made, verified, re-imported, the
    report rendered) in seconds.                                           goal <= 20 s.
(2) the same, as a ratio to ``importers.load`` of the journal (what any view of it costs).
(3) ``walkback verify REPORT.pdf`` (the bundle, then the pages against the signed page account)
    vs verifying the attached bundle alone (what verify did before it checked the pages).

Usage: ./run bench report [--records N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, load_note, report, scratch_dir, timed  # noqa: E402
from pypdf import PdfReader  # noqa: E402
from walkback.exporters import exporter  # noqa: E402
from walkback.exporters.bundle.keys import generate, trust_key  # noqa: E402
from walkback.exporters.bundle.verify import verify, verify_file  # noqa: E402
from walkback.exporters.pdf.extract import attached_bundle  # noqa: E402
from walkback.importers import load  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1764600000")
    sys._called_from_test = True  # type: ignore[attr-defined]  # no third-party plugins in a bench
    with scratch_dir("wb-bench-report-") as tmp:
        path = Path(tmp) / "journal.jsonl"
        size = synth_journal(path, a.records)
        out = Path(tmp) / "report.pdf"
        print(f"{a.records:,} records, {size / 1e6:.0f} MB; best of {a.rounds} interleaved rounds")
        print(load_note())
        pdf = exporter("pdf")
        key, pub = generate(Path(tmp) / "key", comment="bench")
        load_t, pdf_t = best_of(
            a.rounds,
            timed(lambda: load(path)),
            timed(lambda: pdf.export_source(path, out, key=str(key))),  # type: ignore[attr-defined]
        )
        trust = trust_key(pub)
        bundle_t, both_t = best_of(
            a.rounds + 2,
            timed(lambda: verify(attached_bundle(out), trust=trust, origin=str(out))),
            timed(lambda: verify_file(out, trust=trust)),
        )
        pages = len(PdfReader(out).pages)
        ok = report(
            "export pdf of the session (seconds)",
            pdf_t,
            "<= 20",
            pdf_t <= 20.0,
            f"({out.stat().st_size / 1e6:.1f} MB PDF, {pages} pages)",
        )
        report(
            "  export pdf / load of the same session",
            pdf_t / load_t,
            "-",
            True,
            f"(load {load_t:.2f} s, report {pdf_t:.2f} s)",
        )
        report(
            "verify REPORT.pdf with its pages / its bundle alone",
            both_t / bundle_t,
            "-",
            True,
            f"(bundle {bundle_t:.2f} s, bundle and pages {both_t:.2f} s)",
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
