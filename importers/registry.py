"""The importer registry: one dict, content-based detection, one error when nothing matches.

Every importer module defines ``NAME``, ``handles_path(path)``, ``handles_bytes(head)`` and
``load(path, *, progress=None) -> Session``. Built-ins and plugins (entry point group
``walkback.importers``) register through the same dict; plugins load once, lazily, never in tests.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from journal.errors import UnknownFormat, UnusableJournal
from timeline.model import Session

from . import walkback_journal

IMPORTERS: dict[str, ModuleType] = {walkback_journal.NAME: walkback_journal}
SNIFF_BYTES = 4096
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
    raise UnknownFormat(f"not a walkback journal or a known agent log ({_describe(head)})", path=path, line=1)


def _describe(head: bytes) -> str:
    h = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if b"\x00" in head[:512]:
        return "binary data"
    if h[:1] == b"[":
        return "a JSON array, not JSON lines"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:
            return "not UTF-8 text"
    if h[:1] != b"{":
        return "first line is not a JSON object"
    return "unrecognised JSON records"


def load(path: str | Path, *, progress: object = None) -> Session:
    """Detect the format of ``path`` and import it."""
    module = detect(path)
    return module.load(Path(path), progress=progress)  # type: ignore[no-any-return]
