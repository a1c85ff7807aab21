"""The signed account of a report's pages: proof that what a reader sees was rendered from the
attached bundle, checkable without rendering anything again.

The bundle cannot name the pages (they print its digest), so the report carries a second, small
DSSE envelope beside it, ``walkback-report.json``, signed with the same key: an in-toto Statement
whose subjects are the bundle file's sha256 and the digest of everything the PDF shows
(:mod:`.pages`). ``walkback verify REPORT.pdf`` checks that envelope's signature against the
trusted keys, that it names exactly the attached bundle, and that the pages digest recomputed
from the PDF is the signed one; pages taken from another report, or edited, fail ``pages``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .extract import BUNDLE_NAME
from .pages import ALG, pages_digest

REPORT_NAME = "walkback-report.json"
"""The attachment that signs the report's pages."""
PREDICATE_TYPE = "https://walkback.dev/report/v1"
PAGES = "pages"
"""The subject that names the pages digest."""


def page_account(pdf: bytes, bundle: bytes, key: Ed25519PrivateKey | None, version: str) -> bytes:
    """The envelope that signs ``pdf``'s pages digest and ``bundle``'s sha256 (unsigned without a key:
    the digests still tell a mismatch, though nobody vouches for them)."""
    import io

    from pypdf import PdfReader
    from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, b64encode, sign
    from walkback.exporters.bundle.keys import openssh_line
    from walkback.exporters.bundle.statement import STATEMENT_TYPE

    reader = PdfReader(io.BytesIO(pdf))
    stmt = {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": BUNDLE_NAME, "digest": {"sha256": hashlib.sha256(bundle).hexdigest()}},
            {"name": PAGES, "digest": {"sha256": pages_digest(reader)}},
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "generator": {"name": "walkback", "version": version},
            "pages": {"alg": ALG, "count": len(reader.pages)},
        },
    }
    payload = orjson.dumps(stmt)
    env: dict[str, Any] = {
        "payloadType": PAYLOAD_TYPE,
        "payload": b64encode(payload),
        "signatures": [sign(key, PAYLOAD_TYPE, payload)] if key is not None else [],
    }
    if key is not None:
        env["signer"] = {"publicKey": openssh_line(key.public_key())}
    return orjson.dumps(env)


def check_pages(path: Path, bundle: bytes, trust: Any) -> list[Any]:
    """The checks of a report's pages against its bundle: ``report signature``, ``report trust``
    and ``pages`` (a :class:`~walkback.exporters.bundle.verify.Check` each)."""
    from pypdf import PdfReader
    from walkback.exporters.bundle.checks import Check

    reader = PdfReader(path)
    files = reader.attachments
    extra = sorted({n for n in [*files, *_associated(reader)] if n not in (BUNDLE_NAME, REPORT_NAME)})
    twice = sorted(n for n, copies in files.items() if len(copies) > 1)
    if REPORT_NAME not in files:
        return [
            Check(
                PAGES,
                False,
                f"the report carries no {REPORT_NAME}: nothing proves its pages are the rendering "
                "of the attached bundle (made by an older walkback, or its pages were replaced)",
            )
        ]
    found, stmt = _account(files[REPORT_NAME][0], trust)
    if stmt is None:
        return found
    subjects = {
        s.get("name"): s.get("digest", {}).get("sha256") for s in stmt["subject"] if isinstance(s, dict)
    }
    mine = {BUNDLE_NAME: hashlib.sha256(bundle).hexdigest(), PAGES: pages_digest(reader)}
    problems = []
    if subjects.get(BUNDLE_NAME) != mine[BUNDLE_NAME]:
        problems.append("it names another bundle than the one attached")
    if subjects.get(PAGES) != mine[PAGES]:
        problems.append(
            f"the pages are not the ones signed (digest {mine[PAGES][:16]}…, signed "
            f"{str(subjects.get(PAGES))[:16]}…): they were edited or come from another report"
        )
    if set(subjects) != {BUNDLE_NAME, PAGES}:
        problems.append(f"it names {sorted(map(str, subjects))}, not exactly the bundle and the pages")
    problems += [f"{n} is attached but signed by nothing" for n in extra]
    problems += [f"{n} is attached {len(files[n])} times" for n in twice]
    found.append(
        Check(
            PAGES,
            not problems,
            "; ".join(problems)
            or f"the {len(reader.pages)} pages are the ones rendered with the attached bundle "
            f"(digest {mine[PAGES][:16]}…, {ALG})",
        )
    )
    return found


def _associated(reader: Any) -> list[str]:
    """The names of the files the catalog's ``/AF`` associates (left out of the pages digest, so
    each must be one of the two signed attachments)."""
    out = []
    for spec in reader.trailer["/Root"].get_object().get("/AF", []):
        spec = spec.get_object()
        out.append(str(spec.get("/UF", spec.get("/F", "?"))))
    return out


def _account(text: bytes, trust: Any) -> tuple[list[Any], dict[str, Any] | None]:
    """The signature checks of the page account, and its statement (None: unreadable)."""
    from walkback.exporters.bundle.checks import Check, signature_checks
    from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, b64decode
    from walkback.exporters.bundle.statement import STATEMENT_TYPE

    def bad(why: str) -> tuple[list[Any], None]:
        return [Check(PAGES, False, f"{REPORT_NAME} {why}")], None

    try:
        env = json.loads(text, object_pairs_hook=_unique)
        payload = b64decode(env["payload"]) if isinstance(env.get("payload"), str) else None
        stmt = json.loads(payload, object_pairs_hook=_unique) if payload is not None else None
    except (ValueError, TypeError, RecursionError, AttributeError) as e:
        return bad(f"cannot be read: {e}")
    if not isinstance(env, dict) or env.get("payloadType") != PAYLOAD_TYPE or not isinstance(stmt, dict):
        return bad("is not a DSSE envelope of an in-toto statement")
    if stmt.get("_type") != STATEMENT_TYPE or stmt.get("predicateType") != PREDICATE_TYPE:
        return bad(f"is not a {PREDICATE_TYPE} statement")
    if not isinstance(stmt.get("subject"), list):
        return bad("has no subject list")
    sigs = env.get("signatures")
    found, _, _ = signature_checks(
        env, PAYLOAD_TYPE, payload, sigs if isinstance(sigs, list) else [], trust, what="report "
    )
    return found, stmt


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError("a key is named twice")
    return d
