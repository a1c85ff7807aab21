"""The one exception tree of walkback. Library code raises these; only the CLI prints them.

    WalkbackError                 every expected failure; carries path and line when known
    ├── JournalError              a journal cannot be read or written as asked
    │   ├── UnusableJournal       not a journal at all: empty, binary, not JSON lines, unknown version
    │   ├── JournalDamaged        torn tail or corruption found where an intact journal was required
    │   ├── JournalChanged        a saved scan state no longer describes the file (rotated, truncated)
    │   └── JournalWriteFailed    a write or fsync failed; the writer is closed for good (also a WriteFailed)
    ├── BlobError                 a blob is missing, malformed or does not match its hash
    ├── ImporterError
    │   └── UnknownFormat         no importer recognises the input
    ├── RecoveryError             recovery cannot proceed safely (needs a human)
    ├── OutsideWorkspace          a write, restore or delete would land outside the workspace
    ├── WriteFailed               a file could not be written (disk full, quota, read-only): exit 4
    ├── AgentError                the agent loop refused an action (bad planner output, policy)
    ├── ExportError               an export could not be written
    └── SignatureError            a bundle does not verify
        └── UnusableBundle        not a bundle, or a key or trust file that cannot be used: exit 2
"""

from __future__ import annotations

import errno
from pathlib import Path


class WalkbackError(Exception):
    """Base of every expected failure. ``str(e)`` is one line naming the file and line."""

    exit_code: int = 1

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message}"


class JournalError(WalkbackError):
    """A journal cannot be read or written as asked."""


class UnusableJournal(JournalError):
    """The input is not a journal we can read at all (exit code 2)."""

    exit_code = 2


class JournalDamaged(JournalError):
    """Damage was found where an intact journal is required."""


class JournalChanged(JournalError):
    """The file is not the one a saved :class:`~journal.reader.ScanState` describes: read it from the
    start (a rotation replaced it, a repair cut below the saved offset, or it was rewritten)."""


class WriteFailed(WalkbackError):
    """A file could not be written: the disk is full, over quota, read-only or failing.

    Exit code 4, the one code of every failed write whatever the file; the message names it."""

    exit_code = 4


class JournalWriteFailed(JournalError, WriteFailed):
    """A write or fsync failed. Never retried: after a failed fsync the page cache may lie."""


WRITE_FAILED = WriteFailed.exit_code
"""The exit code of a failed write, also for an ``OSError`` of :data:`WRITE_ERRNOS` (CLI)."""
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})
"""What a disk that refuses a write says."""


class BlobError(WalkbackError):
    """A blob is missing, malformed, or does not hash to its name."""


class ImporterError(WalkbackError):
    """An importer could not read its input."""

    exit_code = 2


class UnknownFormat(ImporterError):
    """No importer recognises the input."""


class RecoveryError(WalkbackError):
    """Recovery cannot proceed without a human."""


class OutsideWorkspace(WalkbackError):
    """A write, restore or delete was refused: its target resolves outside the workspace (a
    symbolic link, or a directory that is one)."""


class AgentError(WalkbackError):
    """The agent loop refused to act (invalid planner output, denied approval, policy)."""


class ExportError(WalkbackError):
    """An export could not be written (the output path, a missing optional package, a backend)."""


class SignatureError(WalkbackError):
    """A bundle's signature, digests, chain or Merkle root do not verify (exit code 1)."""


class UnusableBundle(SignatureError):
    """Not a walkback bundle at all, or a key or trust file that cannot be used (exit code 2)."""

    exit_code = 2
