"""The PDF report, read back: it carries the very bundle `export bundle` makes, claims PDF/A-3,
has every section in its outline, prints what a reviewer needs, escapes model-written content,
and is byte-identical across exports. Pages go to test-artifacts/pdf/ as PNG to look at."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pypdf import PdfReader
from walkback.exporters.pdf.render import SECTIONS
from walkback.importers import load
from walkback.journal.testing import synth_journal
from walkback.timeline.details import ModelResult
from walkback.timeline.views import approvals, files_summary

from walkback.cli import cli

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "viewer"))
from sample_runs import XSS, build_run  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts" / "pdf"
EPOCH = "1764600000"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


def export(*args: str) -> None:
    result = CliRunner().invoke(cli, ["export", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def text_of(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def pages_as_png(pdf: Path, name: str) -> list[Path]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    subprocess.run(["pdftoppm", "-r", "50", "-png", str(pdf), str(ARTIFACTS / name)], check=True)
    return sorted(ARTIFACTS.glob(f"{name}-*.png"))


def test_the_report_carries_the_bundle_export_bundle_makes(env, tmp_path: Path) -> None:
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "r.pdf"))
    export("bundle", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "b.json"))
    reader = PdfReader(tmp_path / "r.pdf")
    (attached,) = reader.attachments["walkback-bundle.json"]
    assert attached == (tmp_path / "b.json").read_bytes()
    assert reader.xmp_metadata is not None and reader.xmp_metadata.pdfaid_part == "3"
    af = reader.trailer["/Root"]["/AF"][0].get_object()
    assert af["/AFRelationship"] == "/Data"


def test_the_outline_has_every_section_and_the_pages_are_numbered(env, tmp_path: Path) -> None:
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "r.pdf"))
    reader = PdfReader(tmp_path / "r.pdf")
    titles = [o.title for o in reader.outline if not isinstance(o, list)]
    assert [label for _, label in SECTIONS] == [t for t in titles if t[0].isdigit()]
    text = text_of(tmp_path / "r.pdf")
    assert f"page 1 of {len(reader.pages)}" in text and "Contents" in text
    assert len(pages_as_png(tmp_path / "r.pdf", "demo")) == len(reader.pages)


def test_the_report_prints_the_task_every_change_its_hashes_and_every_approval(env, tmp_path: Path) -> None:
    run = build_run(tmp_path / "runs", recovered=True)
    export("pdf", str(run.dir), "-o", str(tmp_path / "r.pdf"))
    text = " ".join(text_of(tmp_path / "r.pdf").split())
    session = load(run.dir)
    assert session.task in text and "walkback" in text
    for f in files_summary(session):
        assert f["path"] in text
        for h in (f["first_pre"], f["last_post"]):
            assert h is None or h in text.replace(" ", "") or h in text
    for a in approvals(session):
        assert a.decision in text and a.approver in text
    assert "not_applied" in text and "redo" in text  # the recovery decision
    pages_as_png(tmp_path / "r.pdf", "recovered")


def test_the_token_figures_are_the_model_results_usage(env, tmp_path: Path) -> None:
    """The report's tokens, from the session's measures, are what the model results' details say."""
    synth_journal(tmp_path / "journal.jsonl", 301)
    export("pdf", str(tmp_path / "journal.jsonl"), "-o", str(tmp_path / "r.pdf"))
    session = load(tmp_path / "journal.jsonl")
    usage = [x.usage for i in range(len(session)) if isinstance(x := session.detail(i), ModelResult)]
    given, made = sum(u.input_tokens or 0 for u in usage), sum(u.output_tokens or 0 for u in usage)
    assert len(usage) == 100 and given > 100_000
    assert f"{given:,} in / {made:,} out" in " ".join(text_of(tmp_path / "r.pdf").split())


def test_model_written_content_prints_as_literal_text(env, tmp_path: Path) -> None:
    run = build_run(tmp_path / "runs", xss=True)
    export("pdf", str(run.dir), "-o", str(tmp_path / "x.pdf"))
    text = text_of(tmp_path / "x.pdf")
    flat = " ".join(text.split())
    assert XSS["task"] in flat, "the task, tags and all, is printed as text"
    assert XSS["file"] in flat, "a file name is printed as text"
    assert XSS["agent"] in flat
    raw = (tmp_path / "x.pdf").read_bytes()
    assert b"/JavaScript" not in raw and b"/JS " not in raw and b"/URI" not in raw
    pages_as_png(tmp_path / "x.pdf", "xss")


def test_two_exports_are_byte_identical(env, tmp_path: Path) -> None:
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "a.pdf"))
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "b.pdf"))
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()


def test_an_unsigned_report_says_so_and_a_signed_one_names_its_key(env, tmp_path: Path) -> None:
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "u.pdf"))
    assert "UNSIGNED" in text_of(tmp_path / "u.pdf")
    keys = CliRunner().invoke(cli, ["keygen", "-o", str(tmp_path / "k")], catch_exceptions=False)
    assert keys.exit_code == 0, keys.output
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "s.pdf"), "--key", str(tmp_path / "k"))
    text = text_of(tmp_path / "s.pdf")
    assert "VERIFIED" in text and "SHA256:" in text


def test_verify_reads_the_bundle_straight_from_the_report(env, tmp_path: Path) -> None:
    keys = CliRunner().invoke(cli, ["keygen", "-o", str(tmp_path / "k")], catch_exceptions=False)
    assert keys.exit_code == 0
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "s.pdf"), "--key", str(tmp_path / "k"))
    ok = CliRunner().invoke(cli, ["verify", str(tmp_path / "s.pdf"), "--key", str(tmp_path / "k.pub")])
    assert ok.exit_code == 0, ok.output
    other = CliRunner().invoke(cli, ["keygen", "-o", str(tmp_path / "o")], catch_exceptions=False)
    assert other.exit_code == 0
    bad = CliRunner().invoke(cli, ["verify", str(tmp_path / "s.pdf"), "--key", str(tmp_path / "o.pub")])
    assert bad.exit_code == 1


@pytest.mark.skipif(shutil.which("verapdf") is None, reason="veraPDF is not installed (not packaged here)")
def test_verapdf_accepts_the_report(env, tmp_path: Path) -> None:
    export("pdf", str(ROOT / "samples" / "demo"), "-o", str(tmp_path / "r.pdf"))
    run = subprocess.run(["verapdf", "-f", "3b", str(tmp_path / "r.pdf")], capture_output=True, text=True)
    assert 'isCompliant="true"' in run.stdout, run.stdout[-3000:]
