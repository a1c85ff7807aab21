"""The seal that makes every byte of an HTML replay checkable.

The page carries the signed bundle in one slot and a small DSSE envelope, the seal, in another.
The seal signs an in-toto statement of two digests: the bundle slot's exact bytes, and the page
with both slots emptied (its markup, the view data and the code). The verifier computes that
statement itself from the file, so the seal carries nothing it has to trust: its signature must
verify with a trusted key over exactly that statement, and the seal's own bytes must be the
canonical envelope of it (no spare field, no other base64 spelling). Hence a change to any byte
fails: in the markup or the view data (the page digest), in the bundle (its digest, and the
bundle's own checks), in the seal (its signature or its canonical form). The slots are found as
the first opening tag of each; the bundle slot is base64 (of the bundle gzipped), which never holds
``<``, so nothing inside it can end its slot early.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from typing import Any

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from walkback.exporters.bundle.checks import Check, signature_checks
from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, b64decode, b64encode, sign
from walkback.exporters.bundle.statement import STATEMENT_TYPE
from walkback.journal.errors import UnusableBundle

BUNDLE_OPEN = b'<script id="wb-bundle" type="application/octet-stream">'
SEAL_OPEN = b'<script id="wb-seal" type="application/json">'
CLOSE = b"</script>"
PREDICATE_TYPE = "https://walkback.dev/replay/v1"
MAX_BUNDLE = 4 << 30
"""The most a bundle slot may unpack to: a slot made to unpack without end is refused, not read."""
MARK = b"<!-- walkback replay v1 -->"
"""The page's first line after its doctype: how ``walkback verify`` knows a replay."""


class UnusablePage(UnusableBundle):
    """An HTML file that is not a walkback replay (exit code 2)."""


def is_page(head: bytes) -> bool:
    return MARK in head[:200]


def slots(page: bytes) -> tuple[bytes, bytes, bytes, int]:
    """``(page with both slots empty, bundle slot, seal slot, where the bundle slot starts)``.

    Raises:
        UnusablePage: the slots are not there.
    """
    b0 = page.find(BUNDLE_OPEN)
    b1 = page.find(CLOSE, b0 + len(BUNDLE_OPEN)) if b0 >= 0 else -1
    s0 = page.find(SEAL_OPEN, b1) if b1 >= 0 else -1
    s1 = page.find(CLOSE, s0 + len(SEAL_OPEN)) if s0 >= 0 else -1
    if s1 < 0:
        raise UnusablePage("not a walkback replay: its bundle and seal slots are missing")
    b0 += len(BUNDLE_OPEN)
    s0 += len(SEAL_OPEN)
    return page[:b0] + page[b1:s0] + page[s1:], page[b0:b1], page[s0:s1], b0


def statement(blank: bytes, bundle: bytes, at: int) -> bytes:
    """The statement the seal signs (the verifier makes it again from the page)."""
    return orjson.dumps(
        {
            "_type": STATEMENT_TYPE,
            "subject": [
                {"name": "bundle", "digest": {"sha256": hashlib.sha256(bundle).hexdigest()}},
                {"name": "page", "digest": {"sha256": hashlib.sha256(blank).hexdigest()}},
            ],
            "predicateType": PREDICATE_TYPE,
            "predicate": {"bundleAt": at, "bundleSize": len(bundle)},
        }
    )


def envelope(payload: bytes, sig: dict[str, Any]) -> bytes:
    """The one spelling of a seal."""
    return orjson.dumps({"payloadType": PAYLOAD_TYPE, "payload": b64encode(payload), "signatures": [sig]})


def seal(page: bytes, key: Ed25519PrivateKey) -> bytes:
    """``page`` (slots in place, the seal's empty) with its seal written in."""
    blank, bundle, _, at = slots(page)
    payload = statement(blank, bundle, at)
    sealed = envelope(payload, sign(key, PAYLOAD_TYPE, payload))
    cut = page.find(SEAL_OPEN, at + len(bundle)) + len(SEAL_OPEN)
    return page[:cut] + sealed + page[cut:]


def embedded_bundle(page: bytes) -> bytes:
    """The bundle a replay carries, as the bundle verifier reads it (its exact bytes).

    Raises:
        UnusablePage: the slot is not base64 of a gzip stream, or unpacks past :data:`MAX_BUNDLE`.
    """
    try:
        packed = base64.b64decode(slots(page)[1], validate=True)
        z = zlib.decompressobj(wbits=31)  # gzip
        data = z.decompress(packed, MAX_BUNDLE)
        if z.unconsumed_tail or not z.eof or z.unused_data:
            raise UnusablePage(
                "its bundle slot is not one gzip stream of at most "
                f"{MAX_BUNDLE >> 30} GiB (cut, padded or a decompression bomb)"
            )
    except (binascii.Error, zlib.error) as e:
        raise UnusablePage(f"its bundle slot cannot be unpacked: {e}") from None
    return data


def check_page(page: bytes, trust: Any) -> list[Check]:
    """``page signature``, ``page trust`` and ``page``: the seal verifies with a trusted key, and
    it seals exactly this page and this bundle."""
    blank, bundle, sealed, at = slots(page)
    mine = statement(blank, bundle, at)
    if not sealed:
        return [Check("page signature", False, "unsigned: exported without --key")]
    try:
        env = json.loads(sealed)
        payload = b64decode(env["payload"])
        sigs = env["signatures"]
        sig = b64decode(sigs[0]["sig"])
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as e:
        return [Check("page", False, f"the seal cannot be read: {e}")]
    found, _, keyid = signature_checks(env, PAYLOAD_TYPE, payload, sigs, trust, what="page ")
    problems = []
    if payload != mine:
        signed = json.loads(payload) if payload.startswith(b"{") else {}
        names = {s.get("name"): s.get("digest", {}).get("sha256") for s in signed.get("subject", [])}
        mine_names = {s["name"]: s["digest"]["sha256"] for s in json.loads(mine)["subject"]}
        changed = [n for n in ("page", "bundle") if names.get(n) != mine_names[n]] or ["slot"]
        problems.append(f"the {' and the '.join(changed)} changed since the seal was signed")
    elif (
        keyid is None
        or sealed != envelope(payload, {"keyid": keyid, "sig": b64encode(sig)})
        or len(sigs) != 1
    ):
        problems.append("the seal is not in its one canonical form (edited)")
    ok = not problems
    reason = "; ".join(problems) or f"the page ({len(page)} bytes) and its bundle are exactly the ones sealed"
    return [*found, Check("page", ok, reason)]
