"""The checks verification reports, and the one rule for DSSE signatures that the bundle, a
report's page account and a sealed replay all follow (:func:`signature_checks`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dsse import b64decode, verifies
from .keys import TrustedKey, fingerprint


@dataclass
class Check:
    """One verification step, and what it found."""

    name: str
    ok: bool
    reason: str
    at: str | None = None
    """Where the damage it found starts: ``<artifact>:<line>`` (None: nowhere in particular)."""
    event: int | None = None
    """Index of the first event at or after :attr:`at` (the viewer's step is ``event + 1``)."""

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "reason": self.reason, "at": self.at, "event": self.event}


def signature_checks(
    doc: dict[str, Any],
    ptype: str,
    payload: bytes | None,
    sigs: list[Any],
    trust: list[TrustedKey] | None,
    *,
    what: str = "",
) -> tuple[list[Check], TrustedKey | None, str | None]:
    """The ``signature`` and ``trust`` checks of a DSSE envelope (``what`` prefixes their names),
    the trusted key that signed and the fingerprint of the key that verifies.

    Signed means any one signature verifies with a trusted key, whatever the others are and in
    whatever order they come; each of the others is said in the reason.
    """
    out: list[Check] = []
    name = f"{what}signature"
    if not sigs:
        return [Check(name, False, "unsigned: exported without --key")], None, None
    embedded = _embedded_key(doc)
    outcomes = [_one_signature(s, ptype, payload, trust or [], embedded) for s in sigs]
    trusted = next((k for k, (tk, _) in enumerate(outcomes) if isinstance(tk, TrustedKey)), None)
    untrusted = next((k for k, (tk, _) in enumerate(outcomes) if isinstance(tk, str)), None)
    many = len(sigs) > 1

    def others(used: int) -> str:
        said = [f"signature {k}: {why}" for k, (_, why) in enumerate(outcomes) if k != used]
        return f" (the others: {'; '.join(said)})" if said else ""

    if trusted is not None:
        tk = outcomes[trusted][0]
        assert isinstance(tk, TrustedKey)
        which = f"signature {trusted} of {len(sigs)}" if many else "Ed25519 signature"
        out.append(Check(name, True, f"{which} verifies with {tk.keyid}{others(trusted)}"))
        out.append(Check(f"{what}trust", True, f"signed by {tk.principals} ({tk.keyid})"))
        return out, tk, tk.keyid
    if untrusted is not None:
        keyid = str(outcomes[untrusted][0])
        which = f"signature {untrusted} of {len(sigs)}" if many else "Ed25519 signature"
        out.append(Check(name, True, f"{which} verifies with the key it names, {keyid}{others(untrusted)}"))
        where = "no trusted key was given" if trust is None else "that key is not among the trusted keys"
        out.append(Check(f"{what}trust", False, f"untrusted: {where} (--key PUB or --allowed-signers FILE)"))
        return out, None, keyid
    said = "; ".join(f"signature {k}: {why}" for k, (_, why) in enumerate(outcomes))
    out.append(
        Check(
            name,
            False,
            "the signature does not verify: the payload, its type or the signature "
            "was altered, or another key signed" + (f" ({said})" if many else ""),
        )
    )
    out.append(Check(f"{what}trust", False, "no trusted key verifies the signature"))
    return out, None, None


def _one_signature(
    s: Any, ptype: str, payload: bytes | None, trust: list[TrustedKey], embedded: Any
) -> tuple[TrustedKey | str | None, str]:
    """What one DSSE signature is: ``(trusted key, why)``, ``(fingerprint of the key the bundle
    names, why)`` when only that key verifies it, or ``(None, why)``."""
    if not isinstance(s, dict) or not isinstance(s.get("sig"), str):
        return None, "malformed"
    try:
        sig = b64decode(s["sig"])
    except ValueError:
        return None, "not base64"
    if payload is None:
        return None, "the payload is not base64"
    hint = s.get("keyid")
    for tk in sorted(trust, key=lambda k: k.keyid != hint):  # the keyid only orders the attempts
        if verifies(tk.key, ptype, payload, sig):
            return tk, f"verifies with trusted {tk.keyid}"
    if embedded is not None and verifies(embedded, ptype, payload, sig):
        return fingerprint(embedded), f"verifies only with an untrusted key, {fingerprint(embedded)}"
    return None, "does not verify with any trusted key"


def _embedded_key(doc: dict[str, Any]) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_ssh_public_key

    text = (doc.get("signer") or {}).get("publicKey") if isinstance(doc.get("signer"), dict) else None
    try:
        key = load_ssh_public_key(text.encode()) if isinstance(text, str) else None
    except (ValueError, TypeError):
        return None
    return key if isinstance(key, Ed25519PublicKey) else None
