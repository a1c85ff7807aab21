"""Torn-tail repair: keep a copy, cut the tail, say so in the journal.

Only a torn tail is ever cut (a crash mid-append leaves one). Corruption followed by valid records
is refused: cutting there would destroy records that were durably written, so a human decides.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from . import failpoints
from .errors import JournalDamaged
from .fileops import OS, FileOps, naming
from .reader import ScanResult, scan
from .record import line_hash
from .writer import JournalWriter, journal_path


@dataclass(frozen=True)
class RepairReport:
    """What a repair did; ``truncated_bytes == 0`` means there was nothing to repair."""

    path: Path
    truncated_bytes: int
    last_good_lsn: int
    broken_copy: Path | None
    recovered_lsn: int | None
    """lsn of the appended ``journal.recovered`` record."""


MAX_ORPHAN_LINES = 100
"""``orphan_lines`` lists at most this many line numbers (``orphan_count`` has them all)."""


def repair(path: str | Path, *, ops: FileOps = OS) -> RepairReport:
    """Repair a torn tail in place. Raises :class:`JournalDamaged` on mid-log corruption.

    The caller must know that no writer is live (hold the run lock, as ``walkback check
    --repair`` and recovery do): a live writer's half-written line looks like a torn tail.
    """
    path = journal_path(path)
    result: ScanResult = scan(path)
    if result.corrupt:
        d = result.corrupt[0]
        raise JournalDamaged(
            f"corruption at lsn {d.lsn} ({d.reason}) with valid records after it; "
            "not repaired: a human must decide",
            path=path,
            line=d.line,
        )
    if not result.torn:
        return RepairReport(path, 0, result.last_lsn, None, None)
    if not result.records:
        d = result.torn[0]
        raise JournalDamaged(
            f"the header itself is damaged ({d.reason}); nothing valid to keep, not repaired",
            path=path,
            line=d.line,
        )
    verified = _verified_line(path, result) if result.dialect != "v1" else None
    if verified is not None:
        raise JournalDamaged(
            f"the tail after {result.dialect} {result.last_lsn} holds v1 records whose hashes verify; "
            "not a torn tail, not repaired: a human must decide",
            path=path,
            line=verified,
        )
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(result.valid_end)
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    dropped = result.file_size - result.valid_end
    stamp = int(time.time())
    while (broken := path.with_name(f"{path.name}.broken-{result.last_lsn}-{stamp}")).exists():
        stamp += 1  # never overwrite the copy an earlier, interrupted repair kept
    try:
        shutil.copyfile(path, broken)
        fd = ops.open_append(broken)
        ops.fsync(fd)
        ops.close(fd)
        ops.fsync_dir(path.parent)
    except OSError as e:
        broken.unlink(missing_ok=True)  # a partial copy is no copy; the journal is untouched
        raise naming(e, broken) from None
    failpoints.failpoint("repair.after_copy")
    ops.truncate(path, result.valid_end)
    fd = ops.open_append(path)
    ops.fsync(fd)
    ops.close(fd)
    failpoints.failpoint("repair.after_truncate")
    with JournalWriter.open(path, ops=ops) as w:
        lsn = w.append(
            "journal.recovered",
            truncated_bytes=dropped,
            dropped_sha256="sha256:" + digest.hexdigest(),
            orphan_lines=[d.line for d in result.torn[:MAX_ORPHAN_LINES]],
            orphan_count=len(result.torn),
            last_good_lsn=result.last_lsn,
            broken_copy=broken.name,
        )
    return RepairReport(path, dropped, result.last_lsn, broken, lsn)


def _verified_line(path: Path, result: ScanResult) -> int | None:
    """The line number of the first line after the valid end whose own hash verifies, if any.

    In a v1 journal the chain rules already keep such records out of a torn tail unless they link
    to nothing (a lost or reordered unsynced append); in a seed dialect they are records of another
    format the dialect cannot check, and a repair never cuts what verifies.
    """
    with open(path, "rb") as f:
        f.seek(result.valid_end)
        for n, line in enumerate(f, start=result.valid_line + 1):
            stored, computed = line_hash(line.rstrip(b"\r\n"))
            if stored is not None and stored == computed:
                return n
    return None
