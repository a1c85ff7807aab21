"""The tamper matrix: every positive case has a tampered twin, and the twin fails the check that
names the tampering (exit 1), with where the damage starts when it can be said."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest
from bundle_helpers import SAMPLES, bundle, checks, edit, flip, keypair, run, set_source, source_lines
from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, sign
from walkback.exporters.bundle.keys import load_private


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A signed bundle of the multi-agent sample, its key and its public key."""
    d = tmp_path_factory.mktemp("bundle")
    key, pub = keypair(d)
    return bundle(SAMPLES / "multi-agent", d / "b.json", key), key, pub


def verify_json(b: Path, pub: Path, *extra: str | Path) -> tuple[int, dict[str, dict[str, Any]]]:
    r = run("verify", b, "--key", pub, "--json", *extra)
    return r.exit_code, checks(r)


def test_the_untampered_bundle_verifies(signed: tuple[Path, Path, Path]) -> None:
    b, _, pub = signed
    code, found = verify_json(b, pub)
    assert code == 0, [c for c in found.values() if not c["ok"]]
    assert {"signature", "trust", "merkle", "chain head", "events", "fileChanges", "approvals"} <= set(found)


def _lines_edit(fn: Any) -> Any:
    def go(doc: dict[str, Any]) -> None:
        lines = source_lines(doc)
        fn(lines)
        set_source(doc, lines)

    return go


def _flip_source(lines: list[bytes]) -> None:
    lines[6] = lines[6].replace(b'"lsn":6', b'"lsn":7', 1)


def _drop_middle(lines: list[bytes]) -> None:
    del lines[10]


def _drop_last(lines: list[bytes]) -> None:
    del lines[-2]  # the last record (the file ends with a newline: the last piece is empty)


def _swap(lines: list[bytes]) -> None:
    lines[8], lines[9] = lines[9], lines[8]


def _remove_artifact(doc: dict[str, Any]) -> None:
    doc["artifacts"] = [a for a in doc["artifacts"] if a["name"] != "agents/auth/journal.jsonl"]


def _add_artifact(doc: dict[str, Any]) -> None:
    doc["artifacts"].append({"name": "agents/extra/journal.jsonl", "size": 3, "data": "e30K"})


def _payload_type(doc: dict[str, Any]) -> None:
    doc["payloadType"] = "application/json"


def _flip_payload(doc: dict[str, Any]) -> None:
    doc["payload"] = flip(doc["payload"], 40)


def _flip_signature(doc: dict[str, Any]) -> None:
    doc["signatures"][0]["sig"] = flip(doc["signatures"][0]["sig"], 5)


TAMPERS = {
    "flipped byte in a source": (
        _lines_edit(_flip_source),
        {"digest journal.jsonl", "merkle"},
        "journal.jsonl:7",
    ),
    "record dropped from the middle": (
        _lines_edit(_drop_middle),
        {"merkle", "integrity"},
        "journal.jsonl:11",
    ),
    "last record dropped": (_lines_edit(_drop_last), {"chain head", "events", "merkle"}, None),
    "records swapped": (_lines_edit(_swap), {"merkle", "integrity"}, "journal.jsonl:9"),
    "artifact removed": (_remove_artifact, {"artifacts"}, None),
    "artifact added": (_add_artifact, {"artifacts"}, None),
    "payloadType changed": (_payload_type, {"payloadType", "signature"}, None),
    "flipped byte in the payload": (_flip_payload, {"signature"}, None),
    "flipped byte in the signature": (_flip_signature, {"signature", "trust"}, None),
}


@pytest.mark.parametrize("case", list(TAMPERS))
def test_a_tampered_bundle_fails_the_check_that_names_it(
    case: str, signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    b, _, pub = signed
    fn, failing, at = TAMPERS[case]
    code, found = verify_json(edit(b, tmp_path / "t.json", fn), pub)
    assert code == 1
    failed = {name for name, c in found.items() if not c["ok"]}
    assert failing <= failed, failed
    if at is not None:
        located = [c for c in found.values() if not c["ok"] and c["at"]]
        assert located[0]["at"] == at
        assert located[0]["event"] is not None


def test_damage_is_located_at_its_first_event(signed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """The badge data: the failed check's line, and the first event read from that line on."""
    from walkback.exporters.bundle.keys import trust_key
    from walkback.exporters.bundle.verify import open_bundle, verify

    b, _, pub = signed
    bad = edit(b, tmp_path / "t.json", _lines_edit(_flip_source))
    with open_bundle(bad) as f:
        v, session = verify(f, trust=trust_key(pub), origin=str(bad), keep=True)
    assert session is not None and v.damage is not None and v.damage.event is not None
    ev = session.event(v.damage.event)
    assert Path(ev.source).name == "journal.jsonl" and ev.line >= 7
    assert session.verification is v


def test_a_trusted_signer_whose_predicate_lies_is_caught(
    signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Re-signed with the trusted key itself: only re-deriving the facts catches the lie."""
    b, key, pub = signed

    def lie(doc: dict[str, Any]) -> None:
        stmt = orjson.loads(base64.b64decode(doc["payload"]))
        stmt["predicate"]["events"] += 1
        payload = orjson.dumps(stmt)
        doc["payload"] = base64.b64encode(payload).decode()
        doc["signatures"] = [sign(load_private(key), PAYLOAD_TYPE, payload)]

    code, found = verify_json(edit(b, tmp_path / "t.json", lie), pub)
    assert code == 1
    assert found["signature"]["ok"] and found["trust"]["ok"] and not found["events"]["ok"]


def test_a_key_not_in_allowed_signers_is_untrusted(signed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    b, _, pub = signed
    _, other = keypair(tmp_path, "other")
    good = tmp_path / "good_signers"
    good.write_text(f"alice@example.com {' '.join(pub.read_text().split()[:2])}\n")
    bad = tmp_path / "bad_signers"
    bad.write_text(f"mallory@example.com {' '.join(other.read_text().split()[:2])}\n")
    ok = run("verify", b, "--allowed-signers", good, "--identity", "alice@example.com")
    assert ok.exit_code == 0 and "valid, signed by alice@example.com" in ok.stderr + ok.stdout
    r = run("verify", b, "--allowed-signers", bad, "--json")
    assert r.exit_code == 1
    found = checks(r)
    assert found["signature"]["ok"] and not found["trust"]["ok"]
    wrong_identity = run("verify", b, "--allowed-signers", good, "--identity", "bob@example.com")
    assert wrong_identity.exit_code == 1


def test_an_unsigned_bundle_says_so(tmp_path: Path) -> None:
    key, pub = keypair(tmp_path)
    b = bundle(SAMPLES / "rename-crashed", tmp_path / "u.json", None)
    code, found = verify_json(b, pub)
    assert code == 1
    assert "unsigned" in found["signature"]["reason"]
    assert found["merkle"]["ok"] and found["events"]["ok"]  # intact, just not vouched for
