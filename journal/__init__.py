"""The reference journal: format v1 encoding, writer, reader, repair and blob store."""

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
from .reader import Damage, Record, Scanner, ScanResult, ScanState, open_journal, read_at, read_records, scan
from .record import ABSENT, FORMAT_VERSION, SYNC_TYPES, sha256_bytes, sha256_file
from .repair import RepairReport, repair
from .writer import JOURNAL_NAME, JournalWriter, journal_path

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
