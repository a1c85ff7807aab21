"""The reference journal: format v1 encoding, writer, reader, repair and blob store.

The names below load on first use (PEP 562), so a light submodule (:mod:`journal.line`, what an
agent's hook appends with) does not pull in the reader and orjson with its package.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from walkback.lazy import names

if TYPE_CHECKING:
    from .blobs import BlobStore, parse_hash
    from .errors import (
        AgentError,
        BlobError,
        ImporterError,
        JournalChanged,
        JournalDamaged,
        JournalError,
        JournalWriteFailed,
        RecoveryError,
        UnknownFormat,
        UnusableJournal,
        WalkbackError,
    )
    from .fileops import OS, FileOps, atomic_write
    from .line import ABSENT, FORMAT_VERSION, SYNC_TYPES, sha256_bytes, sha256_file
    from .reader import (
        Damage,
        Record,
        Scanner,
        ScanResult,
        ScanState,
        open_journal,
        read_at,
        read_records,
        scan,
    )
    from .repair import RepairReport, repair
    from .writer import JOURNAL_NAME, JournalWriter, journal_path

_HOME = {
    **dict.fromkeys(("BlobStore", "parse_hash"), ".blobs"),
    **dict.fromkeys(
        (
            "AgentError",
            "BlobError",
            "ImporterError",
            "JournalChanged",
            "JournalDamaged",
            "JournalError",
            "JournalWriteFailed",
            "RecoveryError",
            "UnknownFormat",
            "UnusableJournal",
            "WalkbackError",
        ),
        ".errors",
    ),
    **dict.fromkeys(("OS", "FileOps", "atomic_write"), ".fileops"),
    **dict.fromkeys(
        (
            "Damage",
            "Record",
            "Scanner",
            "ScanResult",
            "ScanState",
            "open_journal",
            "read_at",
            "read_records",
            "scan",
        ),
        ".reader",
    ),
    **dict.fromkeys(("ABSENT", "FORMAT_VERSION", "SYNC_TYPES", "sha256_bytes", "sha256_file"), ".line"),
    **dict.fromkeys(("RepairReport", "repair"), ".repair"),
    **dict.fromkeys(("JOURNAL_NAME", "JournalWriter", "journal_path"), ".writer"),
}
"""Each public name -> the module that defines it."""

__all__ = [
    "ABSENT",
    "FORMAT_VERSION",
    "JOURNAL_NAME",
    "OS",
    "SYNC_TYPES",
    "AgentError",
    "BlobError",
    "BlobStore",
    "Damage",
    "FileOps",
    "ImporterError",
    "JournalChanged",
    "JournalDamaged",
    "JournalError",
    "JournalWriteFailed",
    "JournalWriter",
    "Record",
    "RecoveryError",
    "RepairReport",
    "ScanResult",
    "ScanState",
    "Scanner",
    "UnknownFormat",
    "UnusableJournal",
    "WalkbackError",
    "atomic_write",
    "journal_path",
    "open_journal",
    "parse_hash",
    "read_at",
    "read_records",
    "repair",
    "scan",
    "sha256_bytes",
    "sha256_file",
]


__getattr__ = names(__name__, globals(), _HOME)


class _Package(ModuleType):
    """The package's module type: ``repair`` names both a submodule and the function it defines.

    The import system binds a loaded submodule to its package's attribute of the same name; here
    that would make ``from walkback.journal import repair`` the module. The function stays the name.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if not (isinstance(value, ModuleType) and _HOME.get(name) == "." + name):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
