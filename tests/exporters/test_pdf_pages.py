"""A report's pages are proven to be the rendering of its bundle: pages from another session (or
edited, or added, or left without their account) carrying a genuine signed bundle do not verify,
while the untouched report verifies."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from bundle_helpers import SAMPLES, checks, keypair, run
from pypdf import PdfReader, PdfWriter
from walkback.exporters.pdf.attest import REPORT_NAME
from walkback.exporters.pdf.extract import BUNDLE_NAME


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two signed reports of different sessions, by the same trusted key."""
    d = tmp_path_factory.mktemp("reports")
    key, pub = keypair(d)
    out = {"pub": pub}
    for name, sample in (("demo", "rename-crashed"), ("other", "rename-clean")):
        r = run("export", "pdf", SAMPLES / sample, "-o", d / f"{name}.pdf", "--key", key)
        assert r.exit_code == 0, r.output
        out[name] = d / f"{name}.pdf"
    return out


def attached(pdf: Path, name: str) -> bytes:
    return bytes(PdfReader(pdf).attachments[name][0])


def verify(pdf: Path, pub: Path) -> tuple[int, dict[str, dict[str, object]]]:
    r = run("verify", pdf, "--key", pub, "--json")
    return r.exit_code, checks(r)


def pages_with(pages: Path, bundle: Path, account: Path | None, out: Path) -> Path:
    """A PDF of the pages of ``pages`` carrying the bundle of ``bundle`` and the page account of
    ``account`` (none: no account), all genuine: what a forger can put together."""
    w = PdfWriter()
    for page in PdfReader(pages).pages:
        w.add_page(page)
    w.add_attachment(BUNDLE_NAME, attached(bundle, BUNDLE_NAME))
    if account is not None:
        w.add_attachment(REPORT_NAME, attached(account, REPORT_NAME))
    return write(w, out)


def write(w: PdfWriter, out: Path) -> Path:
    buf = io.BytesIO()
    w.write(buf)
    out.write_bytes(buf.getvalue())
    return out


def test_the_report_as_written_verifies_with_its_pages(reports: dict[str, Path]) -> None:
    code, found = verify(reports["demo"], reports["pub"])
    assert code == 0, [c for c in found.values() if not c["ok"]]
    assert found["pages"]["ok"] and found["report signature"]["ok"] and found["report trust"]["ok"]
    assert "13 pages" in str(found["pages"]["reason"]) or "pages are the ones" in str(
        found["pages"]["reason"]
    )


@pytest.mark.parametrize("with_account", [True, False])
def test_pages_of_another_session_with_a_genuine_bundle_do_not_verify(
    with_account: bool, reports: dict[str, Path], tmp_path: Path
) -> None:
    """The other report's pages, the demo's signed bundle (and, or not, the demo's page account)."""
    account = reports["demo"] if with_account else None
    forged = pages_with(reports["other"], reports["demo"], account, tmp_path / "forged.pdf")
    code, found = verify(forged, reports["pub"])
    assert code == 1
    assert found["signature"]["ok"] and found["events"]["ok"]  # the bundle itself is genuine
    assert not found["pages"]["ok"]
    words = "the pages are not the ones signed" if with_account else f"carries no {REPORT_NAME}"
    assert words in str(found["pages"]["reason"])


def test_the_other_reports_account_does_not_vouch_for_this_bundle(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    """The other report whole, its own genuine page account, and the demo's bundle swapped in."""
    swapped = pages_with(reports["other"], reports["demo"], reports["other"], tmp_path / "swapped.pdf")
    code, found = verify(swapped, reports["pub"])
    assert code == 1 and "names another bundle" in str(found["pages"]["reason"])


def test_an_edited_page_and_an_added_page_do_not_verify(reports: dict[str, Path], tmp_path: Path) -> None:
    stamped = PdfWriter(clone_from=reports["demo"])
    stamped.pages[0].merge_page(PdfReader(reports["other"]).pages[0])  # text drawn over the cover
    code, found = verify(write(stamped, tmp_path / "stamped.pdf"), reports["pub"])
    assert code == 1 and not found["pages"]["ok"] and found["signature"]["ok"]
    longer = PdfWriter(clone_from=reports["demo"])
    longer.add_blank_page()
    code, found = verify(write(longer, tmp_path / "longer.pdf"), reports["pub"])
    assert code == 1 and not found["pages"]["ok"]


def test_an_unsigned_attachment_beside_the_evidence_fails(reports: dict[str, Path], tmp_path: Path) -> None:
    w = PdfWriter(clone_from=reports["demo"])
    w.add_attachment("notes.txt", b"the auditor approved this")
    code, found = verify(write(w, tmp_path / "extra.pdf"), reports["pub"])
    assert code == 1 and "notes.txt is attached but signed by nothing" in str(found["pages"]["reason"])


def test_a_page_account_signed_by_an_untrusted_key_fails_trust(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    from walkback.exporters.bundle.keys import load_private
    from walkback.exporters.pdf.attest import page_account

    key, _ = keypair(tmp_path, "mallory")
    pdf = reports["demo"].read_bytes()
    forged = page_account(pdf, attached(reports["demo"], BUNDLE_NAME), load_private(key), "0")
    w = PdfWriter(clone_from=reports["demo"])
    w.attachments  # noqa: B018 - make pypdf read the name tree before it is replaced
    root = w._root_object
    del root["/Names"]
    del root["/AF"]
    w.add_attachment(BUNDLE_NAME, attached(reports["demo"], BUNDLE_NAME))
    w.add_attachment(REPORT_NAME, forged)
    code, found = verify(write(w, tmp_path / "mallory.pdf"), reports["pub"])
    assert code == 1 and not found["report trust"]["ok"] and found["trust"]["ok"]
    assert orjson.loads(forged)["signatures"]


def test_show_reads_a_report_and_says_whether_its_pages_verify(
    reports: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"auditor@example.com {' '.join(reports['pub'].read_text().split()[:2])}\n")
    monkeypatch.setenv("WALKBACK_ALLOWED_SIGNERS", str(signers))
    good = orjson.loads(run("show", reports["demo"], "--json").stdout)
    assert good["format"] == "bundle:walkback" and good["verification"]["ok"]
    assert "pages" in {c["name"] for c in good["verification"]["checks"]}
    shown = run("show", pages_with(reports["other"], reports["demo"], reports["demo"], tmp_path / "f.pdf"))
    assert shown.exit_code == 0
    assert "  bundle      DOES NOT VERIFY: pages: the pages are not the ones signed" in shown.stdout


def test_a_pdf_that_is_no_report_is_one_error_line(reports: dict[str, Path], tmp_path: Path) -> None:
    plain = tmp_path / "plain.pdf"
    w = PdfWriter()
    w.add_blank_page(100, 100)
    write(w, plain)
    for args in (("show", plain), ("verify", plain, "--key", reports["pub"])):
        r = run(*args)
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "carries no walkback bundle" in r.stderr


def test_the_digest_is_of_what_a_stream_holds_not_how_it_is_compressed() -> None:
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject
    from walkback.exporters.pdf.pages import digest_of

    def holding(stream: object) -> str:
        return digest_of(DictionaryObject({NameObject("/Contents"): stream}))

    plain = DecodedStreamObject()
    plain.set_data(b"BT /F1 12 Tf (1,204 events) Tj ET")
    assert holding(plain) == holding(plain.flate_encode())
    other = DecodedStreamObject()
    other.set_data(b"BT /F1 12 Tf (1,205 events) Tj ET")
    assert holding(other.flate_encode()) != holding(plain.flate_encode())
    image = DecodedStreamObject()
    image.set_data(b"\xff\xd8 jpeg bytes")
    jpeg = DecodedStreamObject()
    jpeg.set_data(b"\xff\xd8 jpeg bytes")
    jpeg[NameObject("/Filter")] = NameObject("/DCTDecode")
    assert holding(image) != holding(jpeg)  # an image filter is part of what the bytes mean


def test_a_file_associated_outside_the_attachments_fails(reports: dict[str, Path], tmp_path: Path) -> None:
    """``/AF`` is left out of the digest: a file associated there must be one of the signed two."""
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, TextStringObject

    w = PdfWriter(clone_from=reports["demo"])
    spec = DictionaryObject(
        {NameObject("/Type"): NameObject("/Filespec"), NameObject("/UF"): TextStringObject("x.js")}
    )
    af = w._root_object["/AF"]
    w._root_object[NameObject("/AF")] = ArrayObject([*af, w._add_object(spec)])
    code, found = verify(write(w, tmp_path / "af.pdf"), reports["pub"])
    assert code == 1 and "x.js is attached but signed by nothing" in str(found["pages"]["reason"])
