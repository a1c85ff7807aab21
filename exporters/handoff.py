"""A session as its signed bundle carries it: what the HTML replay and the markdown summary are
rendered from, so that what they show is exactly what the bundle proves (redacted the same way)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from walkback.journal.errors import ExportError
from walkback.timeline.session import Session


@dataclass
class Bundled:
    """The bundle's bytes, what verifying it found, and the session it carries."""

    data: bytes
    verification: Any
    """A :class:`~walkback.exporters.bundle.verify.Verification` (held: the session reads from
    its folder)."""
    session: Session
    key: Ed25519PrivateKey | None

    @property
    def root(self) -> Path | None:
        """Where the carried sources were extracted (names in the bundle are relative to it)."""
        folder = self.verification.folder
        return folder / "root" if folder is not None else None

    @property
    def merkle(self) -> dict[str, Any]:
        return dict(self.verification.predicate.get("merkle", {}))

    def checks(self) -> list[tuple[str, bool, str]]:
        """The bundle's checks (an unsigned bundle's signature and trust checks left out)."""
        return [
            (c.name, c.ok, c.reason)
            for c in self.verification.checks
            if self.key is not None or c.name not in ("signature", "trust")
        ]

    def line(self) -> str:
        """One line: who signed and the Merkle root."""
        m = self.merkle
        who = f"signed by {self.verification.keyid}" if self.key is not None else "unsigned"
        return f"{who}; Merkle root {m.get('root', '')} over {m.get('treeSize', 0)} lines"


def bundled(source: Path | Session, options: dict[str, Any]) -> Bundled:
    """Bundle the session at ``source`` (or the session itself: one opened from a bundle is
    bundled again from its carried files, hook journal included) with ``options`` (key, redaction
    rules), verify the bundle and import it again.

    Raises:
        ExportError: the bundle just made does not import again.
    """
    from walkback.exporters.bundle import EXPORTER as BUNDLE
    from walkback.exporters.bundle.keys import TrustedKey, load_private
    from walkback.exporters.bundle.verify import verify

    key = load_private(Path(options["key"])) if options.get("key") else None
    if isinstance(source, Session):
        files = source.files()
        if not files:
            raise ExportError("the session was not read from files; nothing to hand off")
        path = files[0]
    else:
        path = Path(source)
    with tempfile.TemporaryDirectory(prefix="walkback-handoff-") as tmp:
        out = Path(tmp) / "bundle.json"
        made = (
            BUNDLE.export(source, out, **options)
            if isinstance(source, Session)
            else BUNDLE.export_source(path, out, **options)
        )
        data = made.read_bytes()
    trust = [TrustedKey(key.public_key(), principals="the key this export was signed with")] if key else None
    v, carried = verify(data, trust=trust, origin=str(path), keep=True)
    if carried is None:
        failed = "; ".join(f"{c.name}: {c.reason}" for c in v.checks if not c.ok)
        raise ExportError(f"the bundle just made does not import again: {failed}", path=path)
    return Bundled(data, v, carried, key)
