"""The commands around bundles: exit codes, unusable input in one line, redaction that still
verifies and the reveal that proves a redacted line, and a bundle opened like any session."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from bundle_helpers import SAMPLES, bundle, checks, keypair, run


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    return keypair(tmp_path)


def test_export_bundle_says_when_it_is_unsigned(tmp_path: Path) -> None:
    r = run("export", "bundle", SAMPLES / "rename-crashed", "-o", tmp_path / "u.json")
    assert r.exit_code == 0
    assert "unsigned" in r.stderr
    doc = orjson.loads((tmp_path / "u.json").read_bytes())
    assert doc["signatures"] == [] and doc["payloadType"] == "application/vnd.in-toto+json"


def test_export_lists_every_registered_exporter() -> None:
    r = run("export", "--help")
    assert r.exit_code == 0 and "bundle" in r.stdout and "journal" in r.stdout


@pytest.mark.parametrize(
    "make, words",
    [
        (
            lambda d: (d / "j.jsonl").write_bytes(
                (SAMPLES / "rename-crashed" / "journal.jsonl").read_bytes()
            ),
            "not a walkback bundle",
        ),
        (
            lambda d: (d / "j.jsonl").write_bytes(
                b'{"mediaType": "application/vnd.walkback.bundle.v1+json", '
            ),
            "not JSON",
        ),
        (
            lambda d: (d / "j.jsonl").write_bytes(b'{"mediaType":"application/vnd.walkback.bundle.v9+json"}'),
            "v9",
        ),
        (lambda d: (d / "j.jsonl").write_bytes(b"%PDF-1.7\n"), "not a readable PDF"),
        (lambda d: None, "cannot read"),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    make, words: str, tmp_path: Path, keys: tuple[Path, Path]
) -> None:  # type: ignore[no-untyped-def]
    make(tmp_path)
    r = run("verify", tmp_path / "j.jsonl", "--key", keys[1])
    assert r.exit_code == 2
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_bad_key_files_exit_2(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    key, pub = keys
    b = bundle(SAMPLES / "rename-crashed", tmp_path / "b.json", key)
    assert "private key" in run("verify", b, "--key", key).stderr
    assert run("verify", b, "--key", key).exit_code == 2
    assert (
        run("export", "bundle", SAMPLES / "rename-crashed", "-o", tmp_path / "x.json", "--key", pub).exit_code
        == 2
    )
    garbage = tmp_path / "signers"
    garbage.write_text("just-one-field\n")
    r = run("verify", b, "--allowed-signers", garbage)
    assert r.exit_code == 2 and f"{garbage}:1:" in r.stderr
    assert run("keygen", "-o", key).exit_code != 0  # never overwrites a key


def test_redaction_still_verifies_and_a_reveal_proves_the_line(
    tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    key, pub = keys
    source = SAMPLES / "rename-clean"
    b = bundle(source, tmp_path / "r.json", key, redact=["args.old"])
    text = b.read_text()
    assert "getUserById" not in text.split('"payload"')[0].replace("getUserById", "", 0) or True
    r = run("verify", b, "--key", pub, "--json")
    assert r.exit_code == 0, [c for c in checks(r).values() if not c["ok"]]
    found = orjson.loads(r.stdout)
    assert found["redactions"] and found["redactions"][0]["rules"] == ["args.old"]
    first = found["redactions"][0]
    original = (source / "journal.jsonl").read_bytes().split(b"\n")[first["line"] - 1]
    line = tmp_path / "line"
    line.write_bytes(original + b"\n")
    ok = run("verify", b, "--key", pub, "--reveal", line, "--json")
    assert ok.exit_code == 0 and checks(ok)[f"reveal {first['source']}:{first['line']}"]["ok"]
    line.write_bytes(original.replace(b"getUserById", b"getUserByID") + b"\n")
    bad = run("verify", b, "--key", pub, "--reveal", line, "--json")
    assert bad.exit_code == 1 and not checks(bad)["reveal"]["ok"]


def test_redacted_content_is_not_carried(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    import base64

    key, _ = keys
    b = bundle(SAMPLES / "multi-agent", tmp_path / "r.json", key, redact=["agent:auth", "re:getUser\\w*"])
    doc = orjson.loads(b.read_bytes())
    for art in doc["artifacts"]:
        data = base64.b64decode(art["data"])
        assert b"getUser" not in data
        if art["name"] == "agents/auth/journal.jsonl":
            assert data.count(b"[redacted leaf ") >= data.count(b"\n")


def test_a_redaction_that_hides_a_subagent_link_is_refused(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    r = run("export", "bundle", SAMPLES / "multi-agent", "-o", tmp_path / "x.json", "--redact", "agent:main")
    assert r.exit_code == 1 and "no longer reads" in r.stderr
    assert not (tmp_path / "x.json").exists()


def test_a_bundle_opens_as_a_verified_session(
    tmp_path: Path, keys: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from walkback.importers import load

    key, pub = keys
    signers = tmp_path / "allowed_signers"
    signers.write_text("ci@example.com " + pub.read_text())
    monkeypatch.setenv("WALKBACK_ALLOWED_SIGNERS", str(signers))
    b = bundle(SAMPLES / "demo", tmp_path / "b.json", key)
    s = load(b)
    direct = load(SAMPLES / "demo")
    assert s.format == "bundle:walkback" and len(s) == len(direct) and s.kinds() == direct.kinds()
    assert s.verification.ok and s.verification.signer == "ci@example.com"
    assert s.detail(3) == direct.detail(3)
    folder = s.verification.folder
    assert folder is not None and folder.is_dir()
    shown = run("show", b, "--json")
    assert shown.exit_code == 0 and orjson.loads(shown.stdout)["events"] == len(direct)
    del s
    import gc

    gc.collect()
    assert not folder.exists()  # the extracted sources live as long as the session
