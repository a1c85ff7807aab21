"""DSSE (Dead Simple Signing Envelope, v1.0): the pre-authentication encoding, signing, checking.

The signature covers ``PAE(payloadType, payload)``, so the type is authenticated along with the
bytes and nothing is canonicalised: the payload is verified exactly as it was signed.
"""

from __future__ import annotations

import binascii
from typing import Any

import pybase64
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .keys import fingerprint

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``, lengths in decimal ASCII."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(t), t, len(payload), payload)


def b64decode(text: str | bytes | bytearray) -> bytes:
    """Standard or URL-safe base64, padded or not (DSSE verifiers must accept both alphabets).

    Raises:
        ValueError: not base64.
    """
    raw = text.encode("ascii", "replace") if isinstance(text, str) else text
    if b"-" in raw or b"_" in raw:  # copies only when needed: a payload may be 100 MB
        raw = raw.translate(_URLSAFE)
    if len(raw) % 4:
        raw += b"=" * (-len(raw) % 4)
    try:
        return pybase64.b64decode(raw, validate=True)
    except binascii.Error as e:
        raise ValueError(f"not base64: {e}") from None


_URLSAFE = bytes.maketrans(b"-_", b"+/")


def b64encode(data: bytes) -> str:
    return pybase64.b64encode(data).decode("ascii")


def sign(key: Ed25519PrivateKey, payload_type: str, payload: bytes) -> dict[str, Any]:
    """One DSSE signature: ``{"keyid": "SHA256:…", "sig": base64}``."""
    return {"keyid": fingerprint(key.public_key()), "sig": b64encode(key.sign(pae(payload_type, payload)))}


def verifies(key: Ed25519PublicKey, payload_type: str, payload: bytes, sig: bytes) -> bool:
    try:
        key.verify(sig, pae(payload_type, payload))
    except InvalidSignature:
        return False
    return True
