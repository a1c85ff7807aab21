"""The journal writer: one record per line, hash chain, fsync before side effects, group commit.

Durability rules (docs/journal-format.md, "Durability"):

* records of a type in :data:`~journal.record.SYNC_TYPES` are fdatasynced before ``append``
  returns: each precedes a side effect (intent, spawn, recovery decision) or closes a run;
* other records are written at once (so a killed process loses nothing) and made durable by the
  next sync record, or by the group-commit timer (``group_interval`` seconds) — whichever is first;
* a failed write or fsync closes the writer for good. It is never retried: after a failed fsync
  the kernel may have dropped the dirty pages while reporting them clean (PostgreSQL's lesson).
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from . import failpoints
from .blobs import BlobStore
from .errors import JournalDamaged, JournalError, JournalWriteFailed
from .fileops import OS, FileOps
from .paths import JOURNAL_NAME as JOURNAL_NAME
from .paths import journal_path as journal_path
from .record import FORMAT_VERSION, SYNC_TYPES, ZERO_HASH, encode, now_iso

if TYPE_CHECKING:
    from .scanresult import ScanResult

PRODUCER = {"name": "walkback", "version": "0.1.0"}
RESERVED = frozenset({"v", "lsn", "seq", "run", "prev", "h"})
"""Envelope fields the writer sets itself; a caller passing one would break the record."""


class JournalWriter:
    """Appends records to one journal. Not thread-safe: one writer per journal, per process."""

    def __init__(
        self,
        path: Path,
        fd: int,
        *,
        run: str,
        agent: str,
        dialect: str,
        next_lsn: int,
        last_h: str,
        ops: FileOps,
        group_interval: float,
        header: dict[str, Any] | None = None,
        first_lsn: int = 0,
    ) -> None:
        self.path = path
        self.run = run
        self.agent = agent
        self.dialect = dialect
        self.next_lsn = next_lsn
        self.last_h = last_h
        self.blobs = BlobStore(path.parent / "blobs", ops=ops)
        self._fd: int | None = fd
        self._ops = ops
        self._dirty = False
        self._group_interval = group_interval
        self._last_sync = time.monotonic()
        self.header: dict[str, Any] = header or {}
        """The live file's first record (``run.start`` or ``journal.continued``): what a rotation repeats."""
        self.first_lsn = first_lsn
        """lsn of the live file's first record."""

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        run_dir: str | Path,
        *,
        task: str,
        run: str | None = None,
        agent: str = "main",
        ops: FileOps = OS,
        group_interval: float = 0.2,
        fd: int | None = None,
        **header: Any,
    ) -> JournalWriter:
        """Create ``run_dir/journal.jsonl`` with its ``run.start`` header (lsn 0), durably.

        ``run_dir`` may also name the journal file itself (a path ending in ``.jsonl``). With
        ``fd``, the records go to that descriptor (the writer closes it) rather than to a file the
        writer opens: a temp file its caller renames into place once complete (``walkback import``).

        Extra keyword arguments become header fields (``base_ref``, ``parent``, ``source`` ...).
        """
        target = Path(run_dir)
        path = target if target.suffix == ".jsonl" else target / JOURNAL_NAME
        run_dir = path.parent
        ops.mkdir(run_dir)
        if path.exists() and path.stat().st_size:
            raise JournalError("journal already exists; open it to append", path=path)
        if fd is None:
            fd = ops.open_append(path)
            ops.fsync_dir(run_dir)
        w = cls(
            path,
            fd,
            run=run or uuid.uuid4().hex[:12],
            agent=agent,
            dialect="v1",
            next_lsn=0,
            last_h=ZERO_HASH,
            ops=ops,
            group_interval=group_interval,
        )
        fields = {"journal_id": uuid.uuid4().hex, "task": task, "producer": PRODUCER, **header}
        try:
            w.append("run.start", **fields)
            w.header = {"type": "run.start", "run": w.run, "agent": w.agent, **fields}
        except BaseException:
            w.close()
            raise
        return w

    @classmethod
    def open(cls, path: str | Path, *, ops: FileOps = OS, group_interval: float = 0.2) -> JournalWriter:
        """Open an existing journal to append. Refuses a damaged one: repair it first.

        A rotation a crash interrupted is finished (or undone) first; the caller holds the run lock.
        """
        from .reader import scan
        from .segments import finish_rotation

        path = journal_path(path)
        finish_rotation(path, ops=ops)
        result = scan(path)
        if not result.intact:
            raise JournalDamaged(
                f"journal is damaged ({result.damage_summary()}); run `walkback check --repair` first",
                path=path,
            )
        return cls.continue_after(path, result, ops=ops, group_interval=group_interval)

    @classmethod
    def continue_after(
        cls,
        path: Path,
        result: ScanResult,
        *,
        header: dict[str, Any] | None = None,
        ops: FileOps = OS,
        group_interval: float = 0.2,
    ) -> JournalWriter:
        """Append after the verified end ``result`` describes, without scanning the journal again.

        For callers that already hold a trusted scan (recovery reads only the tail after the last
        checkpoint, so it passes the ``header`` it read separately); :meth:`open` is this after a
        full scan.
        """
        header = header if header is not None else result.header or {}
        return cls(
            path,
            ops.open_append(path),
            run=str(header.get("run") or header.get("task_id") or ""),
            agent=str(header.get("agent") or "main"),
            dialect=result.dialect,
            next_lsn=result.last_lsn + 1,
            last_h=result.last_h or ZERO_HASH,
            ops=ops,
            group_interval=group_interval,
            header=header,
            first_lsn=result.first_lsn,
        )

    # -- appending ----------------------------------------------------------------------------
    def append(
        self,
        type: str,
        *,
        ref: int | None = None,
        sync: bool | None = None,
        agent: str | None = None,
        **fields: Any,
    ) -> int:
        """Append one record and return its lsn. Syncs when ``type`` requires it or ``sync``.

        In the seed dialects a ``commit`` or ``fail`` carries the number of the intent it closes
        and takes no new one (docs/journal-format.md §6): ``{lsn: ref, type, ...}`` in the lsn
        dialect, the result ``{seq: ref, status, ...}`` in the seq dialect; it returns ``ref``.
        """
        if self._fd is None:
            raise JournalWriteFailed("writer is closed (an earlier write or fsync failed)", path=self.path)
        if not RESERVED.isdisjoint(fields):
            clash = sorted(RESERVED.intersection(fields))
            raise JournalError(f"record fields {clash} are set by the writer", path=self.path)
        in_place = self.dialect != "v1" and type in ("commit", "fail") and ref is not None
        lsn = ref if in_place and ref is not None else self.next_lsn
        line, h = self._encode(type, lsn, None if in_place else ref, agent, fields, in_place=in_place)
        self._write(type, line)
        if not in_place:
            self.next_lsn = lsn + 1
        self.last_h = h
        self._dirty = True
        if sync or (sync is None and type in SYNC_TYPES):
            self._sync(type)
        elif time.monotonic() - self._last_sync >= self._group_interval:
            self._sync(type)
        return lsn

    def _encode(
        self,
        type: str,
        lsn: int,
        ref: int | None,
        agent: str | None,
        fields: dict[str, Any],
        *,
        in_place: bool = False,
    ) -> tuple[bytes, str]:
        if self.dialect == "v1":
            rec: dict[str, Any] = {
                "v": FORMAT_VERSION,
                "lsn": lsn,
                "ts": now_iso(),
                "run": self.run,
                "agent": agent or self.agent,
                "type": type,
            }
            if ref is not None:
                rec["ref"] = ref
            rec.update(fields)
            rec["prev"] = self.last_h
            return encode(rec)
        if self.dialect == "seq" and in_place:
            rec = {"seq": lsn, "status": "ok" if type == "commit" else "failed"}  # the intent's result
        else:
            rec = {"seq" if self.dialect == "seq" else "lsn": lsn, "type": type}
            if ref is not None:
                rec["ref"] = ref
        rec.update(fields)
        return orjson.dumps(rec) + b"\n", ""

    def _write(self, type: str, line: bytes) -> None:
        assert self._fd is not None
        fp = failpoints.active()
        if fp:
            failpoints.failpoint(f"write.{type}.before")
        try:
            if fp and failpoints.armed(f"write.{type}.mid"):
                self._ops.write(self._fd, line[: len(line) // 2])
                failpoints.failpoint(f"write.{type}.mid")
                self._ops.write(self._fd, line[len(line) // 2 :])
            else:
                self._ops.write(self._fd, line)
        except OSError as e:
            self._fail(f"write failed: {e}")
        if fp:
            failpoints.failpoint(f"write.{type}.after")

    def _sync(self, type: str = "") -> None:
        assert self._fd is not None
        fp = failpoints.active()
        if fp:
            failpoints.failpoint(f"fsync.{type}.before")
        try:
            self._ops.fdatasync(self._fd)
        except OSError as e:
            self._fail(f"fsync failed: {e}")
        self._dirty = False
        self._last_sync = time.monotonic()
        if fp:
            failpoints.failpoint(f"fsync.{type}.after")

    def _fail(self, why: str) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                self._ops.close(fd)
            except OSError:
                pass
        raise JournalWriteFailed(
            f"{why}; the journal is closed for writing and will not be retried", path=self.path
        )

    def rotate(self, min_bytes: int) -> Path | None:
        """Archive the live file once it holds ``min_bytes`` and continue in a new one.

        Call it only right after a durable ``checkpoint`` record (a safe point: nothing open refers
        back into the archived part). Returns the archived segment's path, or None when the live
        file is still small (or not v1). A failure closes the writer; opening the journal again
        finishes or undoes the rotation (:func:`journal.segments.finish_rotation`).
        """
        from .segments import archive

        if self._fd is None:
            raise JournalWriteFailed("writer is closed (an earlier write or fsync failed)", path=self.path)
        if self.dialect != "v1" or self.path.name != JOURNAL_NAME or min_bytes <= 0:
            return None
        if os.fstat(self._fd).st_size < min_bytes:
            return None
        self.sync()
        try:
            seg, cont, h = archive(self)
            fd = self._ops.open_append(self.path)
        except OSError as e:
            self._fail(f"rotation failed: {e}")
        self._ops.close(self._fd)
        self._fd = fd
        self.header, self.first_lsn = cont, self.next_lsn
        self.next_lsn, self.last_h = self.next_lsn + 1, h
        return seg

    def sync(self) -> None:
        """Make every record appended so far durable."""
        if self._fd is not None and self._dirty:
            self._sync()

    def close(self) -> None:
        """Sync and close. Safe to call twice."""
        if self._fd is None:
            return
        self.sync()
        self._ops.close(self._fd)
        self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

