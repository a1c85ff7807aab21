"""Making a bundle: snapshot the sources, redact, re-import, then hash, sign and write in one pass.

The sources are first copied into a private folder (redacted on the way when rules are given),
and the predicate is derived by importing that copy: what is signed is exactly what is carried,
even when the journal is still being appended to or the rules changed some lines. The copy is
then streamed into the bundle: each block is hashed (subject digest), split into Merkle leaves
and base64-encoded straight into the output file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pybase64
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from walkback.exporters.base import atomic_output
from walkback.journal.errors import ExportError
from walkback.timeline.kinds import PLACEHOLDER
from walkback.timeline.session import Session

from . import container, merkle
from .archive import is_archive, redact_archive
from .dsse import PAYLOAD_TYPE, sign
from .keys import openssh_line
from .redact import MARK, Rule
from .redact import redact_line as _redact_line
from .statement import facts, statement


def layout(
    files: list[Path], entry: Path | None = None, hooks: Path | None = None
) -> tuple[Path, dict[Path, str]]:
    """The folder the sources share (and the hooks folder, when a hook journal is among them) and
    each file's name in the bundle (a relative POSIX path)."""
    resolved = [f.resolve() for f in files]
    anchors = (
        [p.parent for p in resolved]
        + ([entry.resolve()] if entry is not None and entry.is_dir() else [])
        + ([hooks.resolve()] if hooks is not None else [])
    )
    root = Path(os.path.commonpath(anchors)) if anchors else Path(".")
    return root, {p: p.relative_to(root).as_posix() for p in resolved}


@dataclass(frozen=True)
class Sources:
    """What bundling needs to know of a session (so the session itself can be let go of before
    its snapshot is imported: two million-event sessions are not held at once)."""

    files: list[Path]
    line_based: frozenset[Path]
    """The files whose records are lines (only those can be redacted)."""
    owners: dict[tuple[Path, int], str]
    """``(file, line) -> agent`` for the agents ``agent:`` rules name."""
    hooks: Path | None = None
    """The hooks folder its hook journal was found in (``<hooks>/<agent>/<session>/``), if hooked."""

    @classmethod
    def of(cls, session: Session, rules: list[Rule]) -> Sources:
        return cls(
            files=session.files(),
            line_based=frozenset(s.path.resolve() for s in session.sources if s.byte_addressed),
            owners=_agent_lines(session, {r.agent for r in rules if r.kind == "agent"}),
            hooks=session.hooked.journal.parents[2] if session.hooked is not None else None,
        )


def write_bundle(
    sources: Sources,
    out: Path,
    *,
    entry: Path | None = None,
    part: str | None = None,
    key: Ed25519PrivateKey | None = None,
    rules: list[Rule] = (),  # type: ignore[assignment]
    on_redactions: Callable[[list[dict[str, Any]]], None] | None = None,
) -> Path:
    """Write the bundle of a session's ``sources`` (read from ``entry``, default its first file);
    ``on_redactions`` is told what the rules hid (the redaction report).

    Raises:
        ExportError: the session has no files, or a redaction would change which files it reads.
    """
    from walkback.importers import load

    from walkback import __version__

    files = sources.files
    if not files:
        raise ExportError("the session was not read from files; nothing to bundle")
    root, names = layout(files, entry, sources.hooks)
    start = entry.resolve() if entry is not None else files[0].resolve()
    entry_name = start.relative_to(root).as_posix() if start != root else "."
    hooks = sources.hooks.resolve().relative_to(root).as_posix() if sources.hooks is not None else None
    with tempfile.TemporaryDirectory(prefix="walkback-bundle-") as tmp:
        snap = Path(tmp)
        redactions = _snapshot(sources, names, snap, list(rules))
        if on_redactions is not None:
            on_redactions(redactions)
        address = str(snap / entry_name) + (f"#{part}" if part else "")
        copy = load(address, hooked=snap / hooks if hooks is not None else False)
        read = {p.resolve().relative_to(snap.resolve()).as_posix() for p in copy.files()}
        if read != set(names.values()):
            lost = sorted(set(names.values()) - read)
            raise ExportError(
                f"after redaction the session no longer reads {', '.join(lost)}; "
                "redact fewer fields of the records that name them",
                path=files[0],
            )
        pieces = facts(copy, {(snap / n).resolve(): n for n in names.values()})
        derived = {k: b"".join(v) for k, v in pieces.items()}
        del copy  # the facts are all the bundle needs of it; free it before streaming
        ordered = [(n, snap / n) for n in names.values()]

        def envelope(carried: list[container.Carried]) -> dict[str, Any]:
            by_line = {(r["source"], r["line"]): bytes.fromhex(r["leaf"]) for r in redactions}
            hashes = b"".join(patched(c, by_line) for c in carried)
            head, size, blocks = merkle.tree(hashes)
            payload = orjson.dumps(
                statement(
                    carried,
                    facts=derived,
                    entry=entry_name,
                    part=part,
                    hooks=hooks,
                    merkle=merkle_claim(head, len(hashes) // merkle.HASH, size, blocks),
                    heads=[chain_head(c.leaves.last) for c in carried],
                    redactions=redactions,
                    version=__version__,
                )
            )
            derived.clear()  # in the payload now
            sigs = [sign(key, PAYLOAD_TYPE, payload)] if key is not None else []
            env: dict[str, Any] = {
                "payloadType": PAYLOAD_TYPE,
                "payload": pybase64.b64encode(payload),  # bytes: written as they are, not re-serialised
                "signatures": sigs,
            }
            if key is not None:
                env["signer"] = {"publicKey": openssh_line(key.public_key())}
            return env

        with atomic_output(out) as f:
            container.write(f, ordered, envelope)
    return out


def merkle_claim(head: bytes, size: int, block: int, blocks: list[bytes]) -> dict[str, Any]:
    return {
        "alg": "rfc6962-sha256",
        "leaf": "sha256(0x00 || line)",
        "treeSize": size,
        "root": head.hex(),
        "blockSize": block,
        "blocks": [b.hex() for b in blocks],
    }


def patched(item: container.Carried, redacted: dict[tuple[str, int], bytes]) -> bytes:
    """``item``'s leaf hashes with each redacted line's original leaf in place of its own."""
    hashes = item.leaves.hashes
    for (name, line), leaf in redacted.items():
        if name == item.name and 1 <= line <= item.leaves.count:
            hashes[(line - 1) * merkle.HASH : line * merkle.HASH] = leaf
    return bytes(hashes)


def chain_head(last: bytes) -> str | None:
    """The ``h`` of a v1 record (the hash chain's head when it is the file's last record)."""
    try:
        rec = orjson.loads(last) if last else None
    except orjson.JSONDecodeError:
        return None
    h = rec.get("h") if isinstance(rec, dict) else None
    return h if isinstance(h, str) else None


def _snapshot(
    sources: Sources, names: dict[Path, str], into: Path, rules: list[Rule]
) -> list[dict[str, Any]]:
    """Copy every source under ``into`` by its bundle name, redacting by ``rules``; the redactions."""
    owners, line_based = sources.owners, sources.line_based
    redactions: list[dict[str, Any]] = []
    for path, name in names.items():
        dest = into / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not rules:
            shutil.copyfile(path, dest)
            continue
        if path not in line_based and not _as_text(path, rules):
            if is_archive(path) and not any(r.kind == "agent" for r in rules):
                try:
                    redactions += redact_archive(path, dest, name, rules)
                except (zipfile.BadZipFile, OSError) as e:
                    raise ExportError(f"cannot redact inside this archive: {e}", path=path) from None
                continue
            raise ExportError(
                "redaction works on line-based sources (JSON lines, text) and inside zip archives; "
                "this one is a JSON document, which takes only re: rules (an archive: no agent: rules)",
                path=path,
            )
        with open(path, "rb") as src, open(dest, "wb") as dst:
            for n, raw in enumerate(src, 1):
                line = raw[:-1] if raw.endswith(b"\n") else raw
                leaf = merkle.leaves([line])
                new, hits = _redact_line(line, rules, MARK.format(leaf.hex()), owners.get((path, n)))
                if hits:
                    redactions.append({"source": name, "line": n, "leaf": leaf.hex(), "rules": hits})
                dst.write(new + raw[len(line) :])
    return redactions


def _as_text(path: Path, rules: list[Rule]) -> bool:
    """Whether a source that is not line-based can still be redacted line by line as text: a JSON
    document (not an archive) and only regular expressions, whose marks keep it JSON."""
    with open(path, "rb") as f:
        head = f.read(8192)
    return all(r.kind == "regex" for r in rules) and b"\x00" not in head and not head.startswith(b"PK")


def _agent_lines(session: Session, agents: set[str]) -> dict[tuple[Path, int], str]:
    """``(file, line) -> agent`` for the events of ``agents`` (what an ``agent:`` rule hides)."""
    if not agents:
        return {}
    t = session.table
    ids = {t.pool.find(a): a for a in agents}
    out: dict[tuple[Path, int], str] = {}
    paths = [s.path.resolve() for s in session.sources]
    for i in range(len(t)):
        a = ids.get(t.agent[i])
        if a is not None and t.line[i] and not t.flags[i] & PLACEHOLDER:
            out[(paths[t.src[i]], t.line[i])] = a
    return out
