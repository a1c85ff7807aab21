"""Verifying a bundle offline, trusting nothing the sender's tools computed.

Every claim is recomputed from the carried bytes: the subject digests, the Merkle root (and the
block roots that say where damage starts), the chain heads; then the sources are imported again
from a private folder with walkback's own importers and every fact of the predicate is derived
anew and compared. Only keys given out of band are trusted (``--key``, ``--allowed-signers``); the
public key the bundle names is used only to tell "signed by a key you do not trust" from "the
signature is broken".

``verify(stream, ...)`` takes the bundle's bytes as a binary stream, so a bundle extracted from a
PDF report (:func:`open_bundle`) is verified the same way.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
import weakref
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson
from walkback.journal.errors import UnusableBundle, WalkbackError
from walkback.timeline.session import Session

from . import container, merkle
from .checks import Check, signature_checks
from .dsse import PAYLOAD_TYPE, b64decode
from .keys import TrustedKey
from .sign import chain_head, patched
from .statement import FACTS, PREDICATE_TYPE, STATEMENT_TYPE, facts


@dataclass
class Verification:
    """What ``verify`` found; also attached to a session opened from a bundle
    (``session.verification``), for the viewer's header and damage badge."""

    origin: str
    """The bundle verified (a path, or what the bytes were extracted from)."""
    checks: list[Check] = field(default_factory=list)
    signer: str | None = None
    """Who signed, from the trust store (``alice@example.com``), when a trusted key verified."""
    keyid: str | None = None
    """The fingerprint of the key the signature verifies with (trusted or not)."""
    redactions: list[dict[str, Any]] = field(default_factory=list)
    """``{source, line, leaf, rules}`` of each redacted line, as signed."""
    predicate: dict[str, Any] = field(default_factory=dict)
    """The signed predicate, less the facts re-derived from the session (``events``,
    ``fileChanges`` ...: when the checks pass, they are what the session itself says)."""
    folder: Path | None = None
    """Where the carried sources were extracted (kept while a session reads from it)."""

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def damage(self) -> Check | None:
        """The first failed check that says where damage starts (the viewer's badge)."""
        return next((c for c in self.checks if not c.ok and c.at), None)

    @property
    def in_archives(self) -> list[dict[str, Any]]:
        """The redactions inside a carried archive's members (``ARTIFACT!MEMBER``): the tree is over
        the rewritten archive, so their original leaves are listed, not in the signed tree."""
        names = {s.get("name") for s in self.predicate.get("sources", []) if isinstance(s, dict)}
        return [r for r in self.redactions if r["source"] not in names]

    @property
    def unsigned(self) -> bool:
        """No signature at all (as opposed to one that does not verify)."""
        return any(
            c.name == "signature" and not c.ok and c.reason.startswith("unsigned") for c in self.checks
        )

    @property
    def verdict(self) -> str:
        """The result in one phrase, what every command that reads a bundle says of it:
        ``valid, signed by …``, or ``DOES NOT VERIFY`` and why (unsigned, an untrusted key, or
        the first failed check)."""
        if self.ok:
            return f"valid, signed by {self.signer}"
        failed = [c for c in self.checks if not c.ok]
        signing = ("signature", "trust", "report signature", "report trust")  # said once, first
        other = next((c for c in failed if c.name not in signing), None)
        trust = next((c for c in failed if c.name == "trust"), None)
        sig_ok = any(c.name == "signature" and c.ok for c in self.checks)
        if self.unsigned:
            why = "unsigned" + (
                f", and {other.name}: {other.reason}" if other else " (every other check passed)"
            )
        elif sig_ok and trust is not None:
            why = f"signed by a key that is not trusted ({self.keyid})" + (
                f", and {other.name}: {other.reason}" if other else ""
            )
        else:
            first = failed[0] if failed else None
            why = f"{first.name}: {first.reason}" if first else "no checks"
        return f"DOES NOT VERIFY: {why}"

    def reread(self) -> tuple[Path, str | None]:
        """Where the carried session is read from again (``entry``, ``part``), while the sources
        are extracted: what re-exporting a bundle bundles."""
        assert self.folder is not None, "the sources were not kept (verify(..., keep=True))"
        entry = self.predicate.get("entry", ".")
        part = self.predicate.get("part")
        return self.folder / "root" / str(entry), part if isinstance(part, str) and part else None

    def redacted(self, source: str, line: int) -> dict[str, Any] | None:
        """The redaction of ``source:line``, if that line is carried redacted."""
        return next((r for r in self.redactions if r["source"] == source and r["line"] == line), None)

    def as_json(self) -> dict[str, Any]:
        d = self.damage
        return {
            "bundle": self.origin,
            "ok": self.ok,
            "verdict": self.verdict,
            "signer": self.signer,
            "keyid": self.keyid,
            "checks": [c.as_json() for c in self.checks],
            "damage": d.as_json() if d is not None else None,
            "redactions": self.redactions,
        }


class _Bad(Exception):
    """A malformed statement (a failed check, not unusable input: it may be what an attacker sent)."""


def open_bundle(path: Path) -> IO[bytes]:
    """The bundle's bytes from ``path``: a bundle file, or a PDF report with the bundle attached.

    Raises:
        UnusableBundle: the file cannot be read.
        UnusableReport: a PDF that carries no walkback bundle (:mod:`walkback.exporters.pdf.extract`).
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as e:
        raise UnusableBundle(f"cannot read: {e.strerror}", path=path) from None
    head = f.read(200)
    if head.startswith(b"%PDF-"):
        f.close()
        from walkback.exporters.pdf.extract import attached_bundle

        return io.BytesIO(attached_bundle(path))
    from walkback.exporters.html.seal import UnusablePage, embedded_bundle, is_page

    if is_page(head):  # an HTML replay (exporters.html.seal)
        with f:
            try:
                return io.BytesIO(embedded_bundle(f.read()))
            except UnusablePage as e:
                raise UnusablePage(e.message, path=path) from None
    f.seek(0)
    return f


def verify_file(
    path: Path,
    *,
    trust: list[TrustedKey] | None,
    reveal: list[bytes] = (),  # type: ignore[assignment]
    keep: bool = False,
) -> tuple[Verification, Session | None]:
    """Verify the bundle at ``path``; of a PDF report, also that its pages are the ones rendered
    from the attached bundle (:mod:`walkback.exporters.pdf.attest`).

    Raises:
        UnusableBundle: as :func:`verify`, or a file that cannot be read.
    """
    from walkback.exporters.html.seal import UnusablePage, check_page, is_page

    try:
        opened = open_bundle(path)
    except UnusablePage:
        changed = _changed_page(path, trust)
        if changed is None:
            raise
        return changed, None
    with opened as f:
        v, session = verify(f, trust=trust, origin=str(path), reveal=reveal, keep=keep)
        if isinstance(f, io.BytesIO):  # a report or a replay: the bundle was read out of it
            with open(path, "rb") as page:
                replay = is_page(page.read(200))
            if replay:
                v.checks += check_page(Path(path).read_bytes(), trust)
            else:
                from walkback.exporters.pdf.attest import check_pages

                v.checks += check_pages(Path(path), f.getvalue(), trust)
    return v, session


def _changed_page(path: Path, trust: list[TrustedKey] | None) -> Verification | None:
    """A sealed replay whose bundle slot no longer unpacks, because it changed since the seal: a
    failed check (exit 1) like any other changed byte; None when the seal does not say so."""
    from walkback.exporters.html.seal import UnusablePage, check_page, embedded_bundle

    page = Path(path).read_bytes()
    try:
        checks = check_page(page, trust)
        embedded_bundle(page)
    except UnusablePage as e:
        if not any(c.name == "page" and not c.ok for c in checks):
            return None
        v = Verification(origin=str(path), folder=None)
        v.checks += [*checks, Check("bundle", False, str(e))]
        return v
    return None


def verify(
    stream: IO[bytes] | bytes,
    *,
    trust: list[TrustedKey] | None,
    origin: str,
    reveal: list[bytes] = (),  # type: ignore[assignment]
    keep: bool = False,
) -> tuple[Verification, Session | None]:
    """Verify a bundle; return what was found and (with ``keep``) the session it carries.

    With ``keep`` the extracted sources stay on disk while the verification (and so the session,
    which holds it) is alive; otherwise they are removed before this returns.

    Raises:
        UnusableBundle: not a readable walkback bundle (exit 2); a bundle that is readable but
            does not verify is reported by failed checks instead.
    """
    if isinstance(stream, bytes):
        stream = io.BytesIO(stream)
    tmp = Path(tempfile.mkdtemp(prefix="walkback-verify-"))
    v = Verification(origin=origin, folder=tmp)
    session: Session | None = None
    try:
        (tmp / "data").mkdir()
        opened = container.read(stream, tmp / "data", origin=origin)
        session = _checks(v, opened, trust, tmp, list(reveal))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if keep and session is not None:
        weakref.finalize(v, shutil.rmtree, tmp, True)
        session.verification = v
        return v, session
    shutil.rmtree(tmp, ignore_errors=True)
    v.folder = None
    return v, None


def _checks(
    v: Verification, opened: container.Opened, trust: list[TrustedKey] | None, tmp: Path, reveal: list[bytes]
) -> Session | None:
    doc = opened.doc
    add = v.checks.append
    ptype = _envelope_field(doc, "payloadType", str, v.origin)
    payload_text = (
        opened.payload if opened.payload is not None else _envelope_field(doc, "payload", str, v.origin)
    )
    opened.payload = None
    sigs = _envelope_field(doc, "signatures", list, v.origin)
    arts = _envelope_field(doc, "artifacts", list, v.origin)
    add(
        Check(
            "payloadType",
            ptype == PAYLOAD_TYPE,
            "in-toto (application/vnd.in-toto+json)"
            if ptype == PAYLOAD_TYPE
            else f"payloadType is {ptype!r}, expected {PAYLOAD_TYPE!r}",
        )
    )
    try:
        payload = b64decode(payload_text)
    except ValueError:
        payload = None
    del payload_text
    _signature(v, doc, ptype, payload, sigs, trust)
    try:
        if payload is None:
            raise _Bad("the payload is not base64")
        stmt = _statement(payload, v.origin)
    except _Bad as e:
        add(Check("statement", False, str(e)))
        return None
    del payload
    pred = stmt["predicate"]
    signed = {k: orjson.dumps(pred.pop(k, None)) for k in FACTS}  # compact JSON, not lists of dicts
    v.predicate = pred
    v.redactions = pred["redactions"]
    add(Check("statement", True, f"in-toto Statement v1, predicate {PREDICATE_TYPE}"))
    carried = _artifacts(v, opened, arts, stmt["subject"])
    hashes = _merkle(v, pred, carried, stmt["subject"])
    if v.redactions:
        add(Check("redactions", True, _redactions_line(v)))
    for line in reveal:
        _reveal(v, pred, hashes, stmt["subject"], line)
    if any(not c.ok for c in v.checks if c.name in ("artifacts",)) or len(carried) != len(stmt["subject"]):
        add(Check("import", False, "not imported: the carried files are not the signed ones"))
        return None
    return _reimport(v, pred, signed, carried, tmp)


def _envelope_field(doc: dict[str, Any], key: str, typ: type, origin: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, typ):
        raise UnusableBundle(f"field {key!r} is missing or not a {typ.__name__}", path=origin)
    return value


def _signature(
    v: Verification,
    doc: dict[str, Any],
    ptype: str,
    payload: bytes | None,
    sigs: list[Any],
    trust: list[TrustedKey] | None,
) -> None:
    found, key, keyid = signature_checks(doc, ptype, payload, sigs, trust)
    v.checks += found
    v.keyid = keyid
    if key is not None:
        v.signer = key.principals


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _Twice(dict[str, Any]):
    """An object of the statement that names a key twice (found again to say where)."""

    key = ""


def _where_twice(value: Any, path: str = "$") -> str | None:
    """The path of the first object that names a key twice (only walked when there is one)."""
    if isinstance(value, _Twice):
        return f"{path}.{value.key}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, child in items:
        found = _where_twice(child, f"{path}.{k}" if isinstance(k, str) else f"{path}[{k}]")
        if found:
            return found
    return None


def _statement(payload: bytes, origin: str) -> dict[str, Any]:
    """The statement, checked for what verify reads of it.

    Raises:
        UnusableBundle: a key is named twice in one object (readers disagree on which wins).
    """
    twice: list[_Twice] = []

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) == len(pairs):
            return d
        seen: set[str] = set()
        marked = _Twice(d)
        marked.key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        twice.append(marked)
        return marked

    try:  # json, not orjson: orjson builds a whole document tree first (+200 MB for a million events)
        stmt = json.loads(payload, parse_constant=_no_constant, object_pairs_hook=unique)
    except (ValueError, RecursionError) as e:
        raise _Bad(f"the payload is not JSON: {e}") from None
    if twice:
        raise UnusableBundle(
            f"duplicate key in the statement (the payload) at {_where_twice(stmt)}: "
            "a bundle holds each key once",
            path=origin,
        )
    if not isinstance(stmt, dict) or stmt.get("_type") != STATEMENT_TYPE:
        raise _Bad(f"the payload is not an in-toto Statement v1 (_type {STATEMENT_TYPE})")
    if stmt.get("predicateType") != PREDICATE_TYPE:
        raise _Bad(
            f"predicateType {stmt.get('predicateType')!r} is not one this walkback verifies "
            f"({PREDICATE_TYPE})"
        )
    subjects, pred = stmt.get("subject"), stmt.get("predicate")
    if not isinstance(subjects, list) or not isinstance(pred, dict):
        raise _Bad("the statement has no subject list or no predicate")
    for s in subjects:
        if not (
            isinstance(s, dict)
            and isinstance(s.get("name"), str)
            and isinstance(s.get("digest"), dict)
            and isinstance(s["digest"].get("sha256"), str)
        ):
            raise _Bad("a subject has no name or no sha256 digest")
    m = pred.get("merkle")
    ok = (
        isinstance(m, dict)
        and isinstance(m.get("root"), str)
        and isinstance(m.get("treeSize"), int)
        and isinstance(m.get("blockSize"), int)
        and isinstance(m.get("blocks"), list)
        and isinstance(pred.get("sources"), list)
        and isinstance(pred.get("redactions"), list)
        and isinstance(pred.get("entry"), str)
    )
    if not ok:
        raise _Bad("the predicate lacks its merkle, sources, redactions or entry")
    for r in pred["redactions"]:
        if not (
            isinstance(r, dict)
            and isinstance(r.get("source"), str)
            and isinstance(r.get("line"), int)
            and isinstance(r.get("leaf"), str)
            and len(r["leaf"]) == 64
        ):
            raise _Bad("a redaction has no source, line or leaf")
    return stmt


def _artifacts(
    v: Verification, opened: container.Opened, arts: list[Any], subjects: list[dict[str, Any]]
) -> list[container.Carried]:
    """Name each decoded artifact, check the set against the subjects and each digest; the
    carried files in subject order (only the signed ones)."""
    by_name: dict[str, container._Data] = {}
    for k, a in enumerate(arts):
        if not isinstance(a, dict) or k >= len(opened.data):
            raise UnusableBundle(f"artifact {k} has no data", path=v.origin)
        name = container.check_name(a.get("name"))
        if name in by_name:
            raise UnusableBundle(f"artifact {name!r} is carried twice", path=v.origin)
        opened.data[k].item.name = name
        by_name[name] = opened.data[k]
    signed = [s["name"] for s in subjects]
    missing = [n for n in signed if n not in by_name]
    extra = [n for n in by_name if n not in signed]
    times = Counter(signed)
    twice = sorted(n for n, k in times.items() if k > 1)
    problems = [f"{n} is signed but missing (removed)" for n in missing]
    problems += [f"{n} is carried but not signed (added; not imported)" for n in extra]
    problems += [f"{n} is listed {times[n]} times among the signed subjects" for n in twice]
    v.checks.append(
        Check(
            "artifacts",
            not problems,
            "; ".join(problems) or f"{len(signed)} file(s), exactly the signed ones",
        )
    )
    out = []
    for s in subjects:
        d = by_name.get(s["name"])
        if d is None or d.item in out:
            continue
        ok = d.item.sha256 == s["digest"]["sha256"]
        v.checks.append(
            Check(
                f"digest {s['name']}",
                ok,
                f"sha256 {d.item.sha256[:16]}…, {d.item.size} bytes"
                + ("" if ok else f"; signed {s['digest']['sha256'][:16]}…: the file was altered"),
            )
        )
        out.append(d.item)
    return out


def _merkle(
    v: Verification, pred: dict[str, Any], carried: list[container.Carried], subjects: list[dict[str, Any]]
) -> bytes:
    """Recompute the tree (redacted lines count as their signed leaves); the leaf hashes."""
    m = pred["merkle"]
    redacted = {(r["source"], r["line"]): bytes.fromhex(r["leaf"]) for r in pred["redactions"]}
    hashes = b"".join(patched(c, redacted) for c in carried)
    size = len(hashes) // merkle.HASH
    head, _, _ = merkle.tree(hashes)
    ok = head.hex() == m["root"] and size == m["treeSize"] and len(carried) == len(subjects)
    at = None
    if not ok:
        at = _first_bad_block(hashes, m, carried)
    v.checks.append(
        Check(
            "merkle",
            ok,
            f"RFC 6962 root {head.hex()[:16]}… over {size} lines"
            + (
                ""
                if ok
                else f"; signed {str(m['root'])[:16]}… over {m['treeSize']}"
                + (f": damage starts in the block holding {at}" if at else "")
            ),
            at=at,
        )
    )
    heads = [chain_head(c.leaves.last) for c in carried]
    claimed = {s.get("name"): s for s in pred["sources"] if isinstance(s, dict)}
    bad = [
        (c, h)
        for c, h in zip(carried, heads, strict=True)
        if (claimed.get(c.name) or {}).get("head") != h
        or (claimed.get(c.name) or {}).get("lines") != c.leaves.count
    ]
    if bad:
        c, h = bad[0]
        want = claimed.get(c.name) or {}
        v.checks.append(
            Check(
                "chain head",
                False,
                f"{c.name}: {c.leaves.count} lines ending at head "
                f"{str(h)[:16]}…; signed {want.get('lines')} lines, head {str(want.get('head'))[:16]}…"
                " (a truncated or extended tail)",
                at=f"{c.name}:{min(c.leaves.count, want.get('lines') or 1)}",
            )
        )
    else:
        shown = [h for h in heads if h]
        v.checks.append(
            Check(
                "chain head",
                True,
                f"{len(shown)} hash chain head(s) and every line count as signed"
                if shown
                else "line counts as signed (no hash chain)",
            )
        )
    return hashes


def _first_bad_block(hashes: bytes, m: dict[str, Any], carried: list[container.Carried]) -> str | None:
    """``<artifact>:<line>`` of the first line of the first block whose root differs from the signed one."""
    size = m["blockSize"]
    if size < 1 or size & (size - 1):
        return None
    mine = merkle.block_roots(hashes, size)
    signed = m["blocks"]
    for k in range(max(len(mine), len(signed))):
        if k >= len(mine) or k >= len(signed) or mine[k].hex() != signed[k]:
            return _line_of(min(k * size, max(len(hashes) // merkle.HASH - 1, 0)), carried)
    return None


def _line_of(leaf: int, carried: list[container.Carried]) -> str | None:
    for c in carried:
        if leaf < c.leaves.count:
            return f"{c.name}:{leaf + 1}"
        leaf -= c.leaves.count
    return f"{carried[-1].name}:{carried[-1].leaves.count + 1}" if carried else None


def _redactions_line(v: Verification) -> str:
    """Where the redacted lines are, and what their leaves prove."""
    inner = v.in_archives
    inside = {id(r) for r in inner}
    lines = [r for r in v.redactions if id(r) not in inside]
    parts = []
    for group, proof in (
        (lines, "original leaves in the signed tree"),
        (inner, "inside rewritten archives: original leaves listed, not in the tree"),
    ):
        if group:
            where = ", ".join(f"{r['source']}:{r['line']}" for r in group[:5])
            more = f" and {len(group) - 5} more" if len(group) > 5 else ""
            parts.append(f"{len(group)} line(s) carried redacted ({where}{more}); {proof}")
    return "; ".join(parts)


def _reveal(
    v: Verification, pred: dict[str, Any], hashes: bytes, subjects: list[dict[str, Any]], line: bytes
) -> None:
    """A revealed original line: its leaf must be a redacted line's, and included under the root."""
    leaf = merkle.leaves([line])
    offsets = {}
    n = 0
    for s in pred["sources"]:
        offsets[s.get("name")] = n
        n += s.get("lines") or 0
    for r in pred["redactions"]:
        if bytes.fromhex(r["leaf"]) == leaf and r["source"] in offsets:
            index = offsets[r["source"]] + r["line"] - 1
            proof = merkle.inclusion_proof(hashes, index) if index < len(hashes) // merkle.HASH else []
            ok = merkle.verify_inclusion(
                leaf, index, pred["merkle"]["treeSize"], proof, bytes.fromhex(pred["merkle"]["root"])
            )
            v.checks.append(
                Check(
                    f"reveal {r['source']}:{r['line']}",
                    ok,
                    f"the revealed line is the one redacted there; its inclusion proof "
                    f"({len(proof)} hashes) verifies against the signed root"
                    if ok
                    else "the revealed line matches the redacted leaf, but not the signed tree",
                    at=None if ok else f"{r['source']}:{r['line']}",
                )
            )
            return
    v.checks.append(
        Check(
            "reveal",
            False,
            f"the revealed line (leaf {leaf.hex()[:16]}…) matches no redacted "
            "line: it is not what was redacted",
        )
    )


def _reimport(
    v: Verification,
    pred: dict[str, Any],
    signed: dict[str, bytes],
    carried: list[container.Carried],
    tmp: Path,
) -> Session | None:
    """Import the carried files from a private folder and derive every fact again."""
    from walkback.importers import load

    root = tmp / "root"
    for c in carried:
        dest = root / c.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        assert c.file is not None
        c.file.rename(dest)
    entry = pred["entry"]
    if entry != ".":
        container.check_name(entry)
    part = pred.get("part")
    hooks = pred.get("hooks")
    if hooks is not None:
        if not isinstance(hooks, str):
            raise _Bad("the predicate's hooks is not a folder name")
        container.check_name(hooks)
    try:
        address = str(root / entry) + (f"#{part}" if isinstance(part, str) and part else "")
        session = load(address, hooked=root / hooks if hooks is not None else False)
    except WalkbackError as e:
        v.checks.append(Check("import", False, f"walkback cannot import the carried files: {e.message}"))
        return None
    names = {(root / c.name).resolve(): c.name for c in carried}
    read = sorted(names.get(p.resolve(), str(p)) for p in session.files())
    ok = read == sorted(c.name for c in carried)
    v.checks.append(
        Check(
            "import",
            ok,
            f"{len(session)} events from {session.format}, re-imported from the carried files"
            if ok
            else f"the carried files import as a session of {read}",
        )
    )
    for key, pieces in facts(session, names).items():  # hashed as derived, never held
        mine = hashlib.sha256()
        for piece in pieces:
            mine.update(piece)
        theirs = signed[key]
        if mine.digest() == hashlib.sha256(theirs).digest():
            v.checks.append(Check(key, True, _as_signed(key, theirs)))
        else:  # derive it again, whole, to say which entry differs
            again = b"".join(facts(session, names)[key])
            v.checks.append(_compare(key, orjson.loads(again), orjson.loads(theirs)))
    _redacted_breaks(v, orjson.loads(b"".join(facts(session, names)["integrity"])))
    _locate(v, session, root)
    return session


def _as_signed(key: str, json: bytes) -> str:
    if len(json) > 1 << 20:  # a million events' file changes: not parsed again to be counted
        return f"{key} as signed ({len(json) / 1e6:.0f} MB of JSON)"
    value = orjson.loads(json)
    if isinstance(value, int):
        return f"{value} as signed"
    return f"{len(value)} {key} as signed" if isinstance(value, list) else f"{key} as signed"


def _compare(key: str, mine: Any, signed: Any) -> Check:
    """One fact re-derived that differs from the signed one; a list names its first differing entry."""
    if isinstance(mine, list) and isinstance(signed, list):
        for k in range(max(len(mine), len(signed))):
            a = mine[k] if k < len(mine) else None
            b = signed[k] if k < len(signed) else None
            if a != b:
                at = (a or b or {}).get("at") if isinstance(a or b, dict) else None
                return Check(
                    key,
                    False,
                    f"{len(mine)} re-derived, {len(signed)} signed; entry {k} differs: "
                    f"{_short(a)} vs signed {_short(b)}",
                    at=at if isinstance(at, str) else None,
                )
    return Check(key, False, f"re-derived {_short(mine)}, signed {_short(signed)}")


def _redacted_breaks(v: Verification, integrity: dict[str, Any]) -> None:
    """Say so when a hash chain breaks only at redacted lines (their signed leaves vouch for them)."""
    hidden = {f"{r['source']}:{r['line']}" for r in v.redactions}
    bad = [c["at"] for c in integrity["corrupt"]]
    check = next(c for c in v.checks if c.name == "integrity")
    if check.ok and bad and hidden and set(bad) <= hidden:
        check.reason = (
            f"as signed: the hash chain breaks only at {len(bad)} redacted line(s), which the "
            "Merkle tree vouches for"
        )


def _short(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 160 else text[:159] + "…"


def _locate(v: Verification, session: Session, root: Path) -> None:
    """Give each failed check that says where damage starts the index of its first event there."""
    t = session.table
    n = len(t)
    if not n:
        return
    srcs = {s.path.resolve(): k for k, s in enumerate(session.sources)}
    src = np.frombuffer(t.src, dtype=np.uint32)[:n]
    line = np.frombuffer(t.line, dtype=np.uint32)[:n]
    for c in v.checks:
        if c.ok or not c.at:
            continue
        name, _, num = c.at.rpartition(":")
        k = srcs.get((root / name).resolve())
        if k is None or not num.isdigit():
            continue
        hits = np.flatnonzero((src == k) & (line >= int(num)))
        c.event = int(hits.min()) if len(hits) else None
