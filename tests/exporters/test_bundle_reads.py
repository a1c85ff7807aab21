"""Every command that reads a bundle says whether it verifies (show, show --json, export, import,
view, the viewer's header), and a bundle exports again: bundle, pdf, any format."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest
from bundle_helpers import SAMPLES, bundle, edit, keypair, run
from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, sign
from walkback.exporters.bundle.keys import load_private


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A valid bundle, an unsigned one, one by an untrusted key, a tampered one, and a forged one
    (its facts changed and signed again by a key nobody trusts), with the trust store."""
    d = tmp_path_factory.mktemp("reads")
    key, pub = keypair(d, "alice")
    other, _ = keypair(d, "mallory")
    signers = d / "allowed_signers"
    signers.write_text(f"alice@example.com {' '.join(pub.read_text().split()[:2])}\n")
    good = bundle(SAMPLES / "rename-crashed", d / "good.json", key)

    def tamper(doc: dict[str, Any]) -> None:
        art = doc["artifacts"][0]
        art["data"] = base64.b64encode(
            base64.b64decode(art["data"]).replace(b'"lsn":3', b'"lsn":4', 1)
        ).decode()

    def forge(doc: dict[str, Any]) -> None:
        stmt = orjson.loads(base64.b64decode(doc["payload"]))
        stmt["predicate"]["events"] -= 1
        payload = orjson.dumps(stmt)
        doc["payload"] = base64.b64encode(payload).decode()
        doc["signatures"] = [sign(load_private(other), PAYLOAD_TYPE, payload)]

    return {
        "signers": signers,
        "key": key,
        "valid": good,
        "unsigned": bundle(SAMPLES / "rename-crashed", d / "unsigned.json", None),
        "untrusted": bundle(SAMPLES / "rename-crashed", d / "untrusted.json", other),
        "tampered": edit(good, d / "tampered.json", tamper),
        "forged": edit(good, d / "forged.json", forge),
    }


VERDICTS = {
    "valid": "valid, signed by alice@example.com",
    "unsigned": "DOES NOT VERIFY: unsigned (every other check passed)",
    "untrusted": "DOES NOT VERIFY: signed by a key that is not trusted",
    "tampered": "DOES NOT VERIFY: digest journal.jsonl",
    "forged": "DOES NOT VERIFY: signature: the signature does not verify",
}


@pytest.fixture
def trusting(made: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("WALKBACK_ALLOWED_SIGNERS", str(made["signers"]))
    return made


@pytest.mark.parametrize("case", list(VERDICTS))
def test_show_states_the_verification_and_its_json_carries_it(case: str, trusting: dict[str, Path]) -> None:
    shown = run("show", trusting[case])
    assert shown.exit_code == 0
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith("  bundle")]
    assert VERDICTS[case] in line
    data = orjson.loads(run("show", trusting[case], "--json").stdout)
    assert data["verification"]["ok"] is (case == "valid")
    assert VERDICTS[case] in data["verification"]["verdict"]
    assert {c["name"] for c in data["verification"]["checks"]} >= {"signature", "merkle", "events"}


def test_show_json_of_a_journal_has_no_verification(trusting: dict[str, Path]) -> None:
    assert orjson.loads(run("show", SAMPLES / "rename-crashed", "--json").stdout)["verification"] is None


@pytest.mark.parametrize("case", ["valid", "unsigned", "tampered", "forged"])
def test_export_and_import_state_the_verification(
    case: str, trusting: dict[str, Path], tmp_path: Path
) -> None:
    for args in (
        ("export", "csv", trusting[case], "-o", tmp_path / "x.csv"),
        ("import", trusting[case], "-o", tmp_path / "j.jsonl"),
    ):
        r = run(*args)
        assert r.exit_code == 0, r.output
        assert f"{trusting[case]}: bundle {VERDICTS[case]}" in r.stderr


def test_view_states_the_verification_before_serving(
    trusting: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from walkback._cli.view import usable

    assert usable((trusting["forged"], SAMPLES / "demo")) == [trusting["forged"], SAMPLES / "demo"]
    err = capsys.readouterr().err
    assert f"{trusting['forged']}: bundle {VERDICTS['forged']}" in err and "demo" not in err


@pytest.mark.parametrize(
    "case, label",
    [
        ("valid", "signed by alice@example.com · verified"),
        ("unsigned", "unsigned · intact, but nobody vouches for it"),
        ("untrusted", "signed by an untrusted key SHA256:"),
        ("tampered", "signed by alice@example.com · verification failed"),
    ],
)
def test_the_viewer_header_says_unsigned_not_an_unknown_key(
    case: str, label: str, trusting: dict[str, Path]
) -> None:
    from walkback.importers import load
    from walkback.viewer.components.header import signed

    head = signed(load(trusting[case]).verification)
    assert head is not None and head["label"].startswith(label) and "unknown key" not in head["label"]


# -- a bundle exports again ------------------------------------------------------------------------
def artifacts(path: Path) -> dict[str, str]:
    return {a["name"]: a["data"] for a in orjson.loads(path.read_bytes())["artifacts"]}


@pytest.mark.parametrize("sample, redact", [("multi-agent", []), ("rename-clean", ["args.old"])])
def test_a_bundle_bundles_again_to_the_same_carried_files(
    sample: str, redact: list[str], trusting: dict[str, Path], tmp_path: Path
) -> None:
    first = bundle(SAMPLES / sample, tmp_path / "a.json", trusting["key"], redact=redact)
    r = run("export", "bundle", first, "-o", tmp_path / "b.json", "--key", trusting["key"])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    assert f"{first}: bundle valid" in r.stderr
    assert artifacts(tmp_path / "b.json") == artifacts(first)
    again = run("verify", tmp_path / "b.json", "--allowed-signers", trusting["signers"])
    assert again.exit_code == 0, again.output


def test_a_bundle_makes_a_report_that_verifies(trusting: dict[str, Path], tmp_path: Path) -> None:
    r = run("export", "pdf", trusting["valid"], "-o", tmp_path / "r.pdf", "--key", trusting["key"])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    ok = run("verify", tmp_path / "r.pdf", "--allowed-signers", trusting["signers"])
    assert ok.exit_code == 0 and "pages: the" in ok.stdout, ok.output
