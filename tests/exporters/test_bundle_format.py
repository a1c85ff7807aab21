"""The bundle's building blocks against their specs and against independent tools: the DSSE
spec's PAE vector, RFC 6962 computed from its recursive definition, securesystemslib's DSSE
verifier, and OpenSSH's ssh-keygen for keys, fingerprints and allowed_signers."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from bundle_helpers import SAMPLES, bundle, checks, keypair, run
from walkback.exporters.bundle import merkle
from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, b64decode, b64encode, pae, sign, verifies
from walkback.exporters.bundle.keys import allowed_signers, fingerprint, load_private, load_public

SSH_KEYGEN = shutil.which("ssh-keygen")
needs_ssh = pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not installed")


def test_pae_matches_the_dsse_spec_vector() -> None:
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_base64_std_and_urlsafe_both_decode() -> None:
    data = bytes(range(256))
    std = b64encode(data)
    assert b64decode(std) == data
    assert b64decode(std.replace("+", "-").replace("/", "_").rstrip("=")) == data
    with pytest.raises(ValueError):
        b64decode("not base64!")


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 §2.1, written from the definition (independent of merkle.py)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:])).digest()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13, 64, 100, 4097, 9000])
def test_merkle_root_and_inclusion_proofs_follow_rfc6962(n: int) -> None:
    lines = [os.urandom(1 + i % 7) for i in range(n)]
    hashes = merkle.leaves(lines)
    head, size, blocks = merkle.tree(hashes)
    assert head == _mth(lines)
    assert len(blocks) <= merkle.MAX_BLOCKS
    for i in range(0, n, max(1, n // 9)):
        proof = merkle.inclusion_proof(hashes, i)
        assert merkle.verify_inclusion(hashes[i * 32 : i * 32 + 32], i, n, proof, head)
        assert not merkle.verify_inclusion(hashlib.sha256(b"no leaf").digest(), i, n, proof, head)


def test_line_leaves_do_not_depend_on_block_boundaries() -> None:
    data = b"a\n\nbb\r\nccc\nno newline"
    expected = merkle.leaves([b"a", b"", b"bb\r", b"ccc", b"no newline"])
    for cut in range(len(data) + 1):
        ll = merkle.LineLeaves()
        ll.feed(data[:cut])
        ll.feed(data[cut:])
        assert bytes(ll.finish()) == expected


def test_the_envelope_verifies_with_securesystemslib(tmp_path: Path) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner, SSlibKey

    key, pub = keypair(tmp_path)
    b = bundle(SAMPLES / "release-in-doubt", tmp_path / "b.json", key)
    env = Envelope.from_dict(orjson.loads(b.read_bytes()))
    public = load_public(pub)
    accepted = env.verify([SSlibKey.from_crypto(public, keyid=fingerprint(public))], 1)
    assert list(accepted) == [fingerprint(public)]
    # and the other way round: an envelope securesystemslib signs verifies with ours
    signer = CryptoSigner.generate_ed25519()
    theirs = Envelope(b'{"x":1}', PAYLOAD_TYPE, {})
    sig = theirs.sign(signer)
    their_key = signer.public_key
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw = Ed25519PublicKey.from_public_bytes(bytes.fromhex(their_key.keyval["public"]))
    assert verifies(raw, PAYLOAD_TYPE, b'{"x":1}', bytes.fromhex(sig.signature))
    assert not verifies(raw, PAYLOAD_TYPE, b'{"x":2}', bytes.fromhex(sig.signature))


@needs_ssh
def test_an_ssh_keygen_key_signs_and_its_allowed_signers_line_trusts_it(tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "dev@example.com", "-f", key], check=True
    )
    pub = key.with_name("id_ed25519.pub")
    listed = subprocess.run([SSH_KEYGEN, "-lf", pub], check=True, capture_output=True, text=True).stdout
    assert fingerprint(load_public(pub)) == listed.split()[1]
    signers = tmp_path / "allowed_signers"
    signers.write_text('# team\ndev@example.com namespaces="git,walkback-bundle" ' + pub.read_text())
    b = bundle(SAMPLES / "rename-crashed", tmp_path / "b.json", key)
    r = run("verify", b, "--allowed-signers", signers, "--identity", "dev@example.com")
    assert r.exit_code == 0, r.stdout
    # a line restricted to git's namespace does not trust the key for bundles
    signers.write_text('dev@example.com namespaces="git" ' + pub.read_text())
    assert allowed_signers(signers) == []


@needs_ssh
def test_a_keygen_key_is_an_openssh_key(tmp_path: Path) -> None:
    """ssh-keygen signs with it and verifies that against our allowed_signers line (one format)."""
    key, pub = keypair(tmp_path)
    assert run("keygen", "-o", tmp_path / "k2").exit_code == 0
    assert oct((tmp_path / "k2").stat().st_mode & 0o777) == "0o600"
    msg = tmp_path / "msg"
    msg.write_bytes(b"hello")
    subprocess.run([SSH_KEYGEN, "-Y", "sign", "-q", "-f", key, "-n", "walkback-bundle", msg], check=True)
    signers = tmp_path / "allowed_signers"
    signers.write_text("me@example.com " + pub.read_text())
    assert [k.keyid for k in allowed_signers(signers)] == [fingerprint(load_private(key).public_key())]
    ok = subprocess.run(
        [
            SSH_KEYGEN,
            "-Y",
            "verify",
            "-f",
            signers,
            "-I",
            "me@example.com",
            "-n",
            "walkback-bundle",
            "-s",
            f"{msg}.sig",
        ],
        input=b"hello",
        capture_output=True,
    )
    assert ok.returncode == 0, ok.stderr


def test_pkcs8_pem_keys_sign_too(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    k = Ed25519PrivateKey.generate()
    pem = tmp_path / "k.pem"
    pem.write_bytes(
        k.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    pub = tmp_path / "k.pub.pem"
    pub.write_bytes(
        k.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    b = bundle(SAMPLES / "rename-crashed", tmp_path / "b.json", pem)
    assert run("verify", b, "--key", pub).exit_code == 0
    assert sign(load_private(pem), PAYLOAD_TYPE, b"x")["keyid"] == fingerprint(k.public_key())


def test_a_reformatted_bundle_still_verifies(tmp_path: Path) -> None:
    """Any JSON layout of the same content reads the same (the reader is a tokenizer, not a regex)."""
    key, pub = keypair(tmp_path)
    b = bundle(SAMPLES / "multi-agent", tmp_path / "b.json", key)
    doc = orjson.loads(b.read_bytes())
    doc = {
        "signer": doc["signer"],
        "note": 'a "data" key: "\\"',
        "artifacts": doc["artifacts"],
        **{k: v for k, v in doc.items() if k not in ("signer", "artifacts")},
    }
    pretty = tmp_path / "pretty.json"
    pretty.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    r = run("verify", pretty, "--key", pub, "--json")
    assert r.exit_code == 0, [c for c in checks(r).values() if not c["ok"]]


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 4097, 9000])
def test_facts_lists_serialise_exactly_as_one_dumps(n: int) -> None:
    from walkback.exporters.bundle.statement import json_list

    items = [{"at": f"journal.jsonl:{i}", "post": None} for i in range(n)]
    assert b"".join(json_list(iter(items))) == orjson.dumps(items)
