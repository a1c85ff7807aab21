"""Content-addressed blob store: ``blobs/sha256/ab/<hex>`` beside the journal.

File pre/post images are written and fsynced here *before* the record that names them, so diffs
and restores never depend on the workspace. Names are validated strictly: a blob is only ever
addressed by a 64-hex digest, which rules out path traversal by construction.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .errors import BlobError
from .fileops import OS, FileOps, atomic_write

_HASH = re.compile(r"^(?:sha256:)?([0-9a-f]{64})$")


def parse_hash(name: str) -> str:
    """Return the bare hex digest of ``sha256:<hex>`` or ``<hex>``; raise BlobError otherwise."""
    m = _HASH.match(name or "")
    if not m:
        raise BlobError(f"not a sha256 blob name: {name[:80]!r}")
    return m.group(1)


class BlobStore:
    """Blobs of one run directory. Writes are atomic and durable; reads verify the hash."""

    def __init__(self, root: Path, *, ops: FileOps = OS) -> None:
        self.root = Path(root)
        self.ops = ops

    def path(self, name: str) -> Path:
        hexd = parse_hash(name)
        return self.root / "sha256" / hexd[:2] / hexd

    def has(self, name: str) -> bool:
        try:
            return self.path(name).is_file()
        except BlobError:
            return False

    def put(self, data: bytes, *, durable: bool = True) -> str:
        """Store ``data`` and return its name ``sha256:<hex>``. Idempotent.

        ``durable``: fsynced, with every directory entry down to it, before this returns (what a
        record naming the blob relies on). Otherwise a copy that a kill keeps but a power loss may
        lose or tear, for data that is durable elsewhere (an image inline in its intent); a later
        durable put of the same data therefore checks the stored bytes instead of trusting them.
        """
        hexd = hashlib.sha256(data).hexdigest()
        name = "sha256:" + hexd
        target = self.root / "sha256" / hexd[:2] / hexd
        if target.is_file() and (not durable or self._holds(target, hexd)):
            return name
        self.ops.mkdir(target.parent, durable=durable)
        atomic_write(target, data, ops=self.ops, durable=durable)
        if durable:  # directories a copy's put may have made without syncing their entries
            for d in (target.parent.parent, self.root, self.root.parent):
                self.ops.fsync_dir(d)
        return name

    @staticmethod
    def _holds(target: Path, hexd: str) -> bool:
        try:
            with open(target, "rb") as f:
                return hashlib.file_digest(f, "sha256").hexdigest() == hexd
        except OSError:
            return False

    def get(self, name: str) -> bytes:
        """Return the blob's bytes, checking they still hash to the name."""
        p = self.path(name)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise BlobError(f"blob {name} is not in the store", path=self.root) from None
        if hashlib.sha256(data).hexdigest() != parse_hash(name):
            raise BlobError(f"blob {name} does not match its hash", path=p)
        return data
