"""Bundles made by hand to fool a verifier: duplicate JSON keys (which readers resolve differently),
a subject listed twice, and several signatures in every order."""

from __future__ import annotations

import base64
import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
from bundle_helpers import SAMPLES, bundle, checks, edit, keypair, run
from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, sign
from walkback.exporters.bundle.keys import load_private


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    d = tmp_path_factory.mktemp("hostile")
    key, pub = keypair(d)
    return bundle(SAMPLES / "multi-agent", d / "b.json", key), key, pub


def resign(doc: dict[str, Any], key: Path, change: Any) -> None:
    """Change the statement and sign it again with ``key`` (a trusted signer who lies)."""
    stmt = orjson.loads(base64.b64decode(doc["payload"]))
    change(stmt)
    payload = orjson.dumps(stmt)
    doc["payload"] = base64.b64encode(payload).decode()
    doc["signatures"] = [sign(load_private(key), PAYLOAD_TYPE, payload)]


# -- duplicate keys --------------------------------------------------------------------------------
def _second_artifacts(text: bytes) -> bytes:
    """A second top-level ``artifacts`` member, empty: jq and Python's json see this one."""
    return text.rstrip()[:-1] + b',"artifacts":[]}'


def _second_data(text: bytes) -> bytes:
    """A second ``data`` in the first artifact: readers that keep the first see the signed bytes."""
    return text.replace(b'"data":"', b'"data":"e30K","data":"', 1)


def _second_sig(text: bytes) -> bytes:
    return text.replace(b'"sig":"', b'"sig":"AAAA","sig":"', 1)


def _second_signer(text: bytes) -> bytes:
    return text.replace(b'"signer":{', b'"signer":{"publicKey":"x",', 1)


@pytest.mark.parametrize(
    "tamper, where",
    [
        (_second_artifacts, "'artifacts' in $"),
        (_second_data, "'data' in $.artifacts[0]"),
        (_second_sig, "'sig' in $.signatures[0]"),
        (_second_signer, "'publicKey' in $.signer"),
    ],
)
def test_a_duplicate_key_in_the_envelope_is_refused_and_named(
    tamper: Any, where: str, signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    b, _, pub = signed
    bad = tmp_path / "dup.json"
    bad.write_bytes(tamper(b.read_bytes()))
    r = run("verify", bad, "--key", pub)
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("Error: ") and f"duplicate key {where}" in line and "Traceback" not in line


def test_a_duplicate_key_in_a_signed_statement_is_refused_and_named(
    signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Signed by the trusted key: ``events`` twice, the second what Python's json would take."""
    b, key, pub = signed

    def twice(doc: dict[str, Any]) -> None:
        stmt = orjson.loads(base64.b64decode(doc["payload"]))
        text = orjson.dumps(stmt).replace(b'"events":', b'"events":1,"events":', 1)
        doc["payload"] = base64.b64encode(text).decode()
        doc["signatures"] = [sign(load_private(key), PAYLOAD_TYPE, text)]

    r = run("verify", edit(b, tmp_path / "t.json", twice), "--key", pub)
    assert r.exit_code == 2
    (line,) = r.stderr.strip().splitlines()
    assert "duplicate key in the statement" in line and "$.predicate.events" in line


def test_the_same_key_in_sibling_objects_is_not_a_duplicate(signed: tuple[Path, Path, Path]) -> None:
    b, _, pub = signed
    assert b.read_bytes().count(b'"name":') > 2  # every artifact has its own name: all fine
    assert run("verify", b, "--key", pub).exit_code == 0


# -- a subject listed twice ------------------------------------------------------------------------
@pytest.mark.parametrize("same_digest", [True, False])
def test_a_subject_listed_twice_is_a_failed_check(
    same_digest: bool, signed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    b, key, pub = signed

    def dup(stmt: dict[str, Any]) -> None:
        again = dict(stmt["subject"][0])
        if not same_digest:
            again["digest"] = {"sha256": "0" * 64}
        stmt["subject"].append(again)

    r = run("verify", edit(b, tmp_path / "t.json", lambda d: resign(d, key, dup)), "--key", pub, "--json")
    assert r.exit_code == 1, r.output
    found = checks(r)
    assert not found["artifacts"]["ok"] and "journal.jsonl is listed 2 times" in found["artifacts"]["reason"]
    assert not found["import"]["ok"] and found["signature"]["ok"]


# -- several signatures ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def three(signed: tuple[Path, Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The trusted signature, one by another (untrusted) key, and a malformed one."""
    b, key, pub = signed
    other, _ = keypair(tmp_path_factory.mktemp("other"), "other")
    doc = orjson.loads(b.read_bytes())
    payload = base64.b64decode(doc["payload"])
    return {
        "doc": doc,
        "pub": pub,
        "trusted": doc["signatures"][0],
        "untrusted": sign(load_private(other), PAYLOAD_TYPE, payload),
        "malformed": {"keyid": doc["signatures"][0]["keyid"], "sig": 7},
        "broken": {"keyid": doc["signatures"][0]["keyid"], "sig": "AAAA"},
    }


def _with(three: dict[str, Any], names: tuple[str, ...], out: Path) -> Path:
    doc = dict(three["doc"], signatures=[three[n] for n in names])
    out.write_bytes(orjson.dumps(doc))
    return out


@pytest.mark.parametrize("order", list(itertools.permutations(["trusted", "untrusted", "malformed"])))
def test_any_trusted_signature_makes_the_bundle_valid_in_any_order(
    order: tuple[str, ...], three: dict[str, Any], tmp_path: Path
) -> None:
    r = run("verify", _with(three, order, tmp_path / "s.json"), "--key", three["pub"], "--json")
    assert r.exit_code == 0, r.output
    found = checks(r)
    reason = found["signature"]["reason"]
    assert f"signature {order.index('trusted')} of 3 verifies" in reason
    assert f"signature {order.index('malformed')}: malformed" in reason
    assert f"signature {order.index('untrusted')}: does not verify with any trusted key" in reason
    assert found["trust"]["ok"]


def test_without_a_trusted_signature_the_others_are_each_said(three: dict[str, Any], tmp_path: Path) -> None:
    r = run(
        "verify", _with(three, ("broken", "malformed"), tmp_path / "s.json"), "--key", three["pub"], "--json"
    )
    assert r.exit_code == 1
    found = checks(r)
    assert not found["signature"]["ok"] and not found["trust"]["ok"]
    assert "signature 0: does not verify" in found["signature"]["reason"]
    assert "signature 1: malformed" in found["signature"]["reason"]
