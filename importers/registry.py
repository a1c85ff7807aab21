"""The importer registry: one dict, content-based detection, one error when nothing matches.

Every importer module defines ``NAME``, ``handles_path(path)``, ``handles_bytes(head)`` and
``load(path, *, progress=None) -> Session``. Built-ins and plugins (entry point group
``walkback.importers``) register through the same dict; plugins load once, lazily, never in tests.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from walkback.journal.errors import UnknownFormat, UnusableJournal
from walkback.journal.reader import BOM
from walkback.journal.scanresult import parse_line
from walkback.timeline.model import Session

from . import walkback_journal

IMPORTERS: dict[str, ModuleType] = {walkback_journal.NAME: walkback_journal}
SNIFF_BYTES = 4096
MAX_DESCRIBED_LINE = 1 << 24
"""An unrecognised file's first line is parsed up to this many bytes to say what is wrong with it."""
_plugins_loaded = False


def ensure_plugins_loaded() -> None:
    """Load third-party importers once (skipped under pytest, which sets ``sys._called_from_test``)."""
    global _plugins_loaded
    if _plugins_loaded or getattr(sys, "_called_from_test", False):
        return
    _plugins_loaded = True
    for ep in entry_points(group="walkback.importers"):
        module = ep.load()
        IMPORTERS.setdefault(module.NAME, module)


def detect(path: str | Path) -> ModuleType:
    """The importer for ``path``, by its name and then its first bytes."""
    ensure_plugins_loaded()
    path = Path(path)
    if not path.exists():
        raise UnusableJournal("no such file or directory", path=path)
    for module in IMPORTERS.values():
        if module.handles_path(path):
            return module
    if path.is_dir():
        raise UnknownFormat("no journal or known agent log in this directory", path=path)
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as e:
        raise UnusableJournal(f"cannot read: {e.strerror}", path=path) from None
    if not head.strip():
        raise UnusableJournal("empty file", path=path, line=1)
    for module in IMPORTERS.values():
        if module.handles_bytes(head):
            return module
    line, why = _describe(path, head)
    raise UnknownFormat(f"not a walkback journal or a known agent log: {why}", path=path, line=line)


def _describe(path: Path, head: bytes) -> tuple[int, str]:
    """The first non-blank line's number and what it is, in the reader's own words."""
    if b"\x00" in head[:512] and head[:512].strip(b"\x00"):
        return 1, "binary data"
    with open(path, "rb") as f:
        for n, raw in enumerate(iter(lambda: f.readline(MAX_DESCRIBED_LINE), b""), 1):
            line = raw.rstrip(b"\r\n")
            if n == 1:
                line = line.removeprefix(BOM)
            if not line.strip():
                continue
            if line.lstrip()[:1] == b"[":
                return n, "a JSON array, not JSON lines"
            rec, why = parse_line(line)
            return n, why or "a JSON object of no known format"
    return 1, "no records"


def load(path: str | Path, *, progress: object = None) -> Session:
    """Detect the format of ``path`` and import it."""
    module = detect(path)
    return module.load(Path(path), progress=progress)  # type: ignore[no-any-return]


def load_chunks(path: str | Path, *, progress: object = None) -> Iterator[Session]:
    """Like :func:`load`, yielding the growing session as it is read and, last, the complete one
    (an importer without ``load_chunks`` yields once)."""
    module = detect(path)
    chunks = getattr(module, "load_chunks", None)
    if chunks is None:
        yield module.load(Path(path), progress=progress)
    else:
        yield from chunks(Path(path), progress=progress)
