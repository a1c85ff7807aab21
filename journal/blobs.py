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

    def put(self, data: bytes) -> str:
        """Store ``data`` durably and return its name ``sha256:<hex>``. Idempotent."""
        hexd = hashlib.sha256(data).hexdigest()
        target = self.root / "sha256" / hexd[:2] / hexd
        if target.is_file():
            return "sha256:" + hexd
        self.ops.mkdir(target.parent)
        atomic_write(target, data, ops=self.ops)
        return "sha256:" + hexd

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
