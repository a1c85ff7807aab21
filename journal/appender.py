"""Appending to a v1 journal that several short-lived processes write in turn.

The hooks of a running agent are separate processes, one per event, and the hooks of one event run
in parallel: no process lives long enough to own a :class:`~journal.writer.JournalWriter`. Each
takes the run lock (``run_dir/lock``, :mod:`journal.runlock`) with a blocking ``flock``, continues
the chain from the journal's verified last record, appends, fsyncs what must be durable, and lets
go. A torn last line (a crash mid-append) is repaired first by :func:`journal.repair.repair`.

Records are encoded with the standard library's ``json`` (its compact form of a record parsed from
JSON is the bytes orjson writes), so a process that appends one record does not pay orjson's import
(:mod:`journal.line`).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from .blobs import BlobStore
from .errors import JournalDamaged, JournalWriteFailed
from .fileops import OS, FileOps
from .line import FORMAT_VERSION, SYNC_TYPES, ZERO_HASH, line_hash, now_iso, seal
from .paths import JOURNAL_NAME
from .runlock import LOCK_NAME

TAIL_BLOCK = 1 << 16
"""Bytes read at a time from the end of the journal to find its last line."""


def dumps(record: dict[str, Any]) -> bytes:
    """A record's compact JSON text (UTF-8; a lone surrogate a payload escaped becomes U+FFFD)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", "replace")


class Appender:
    """One process's turn at a shared journal: ``with Appender(run_dir) as a: a.append(...)``.

    On entry the run directory exists, the lock is held and the chain's end is known; on exit the
    lock is released (appended records of a sync type are durable by then, others are written).
    """

    def __init__(self, run_dir: str | Path, *, ops: FileOps = OS) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / JOURNAL_NAME
        self.blobs = BlobStore(self.run_dir / "blobs", ops=ops)
        self.ops = ops
        self.run = ""
        self.agent = "main"
        self.next_lsn = 0
        self.last_h = ZERO_HASH
        self._lock: int | None = None
        self._fd: int | None = None

    def __enter__(self) -> Appender:
        try:
            self.ops.mkdir(self.run_dir)
            self._lock = os.open(self.run_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._lock, fcntl.LOCK_EX)
            self._fd = self.ops.open_append(self.path)
            self._resume()
        except OSError as e:
            self.close()
            raise JournalWriteFailed(f"cannot open the journal: {e.strerror or e}", path=self.path) from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def empty(self) -> bool:
        """No record yet: the first append must be the ``run.start`` header."""
        return self.next_lsn == 0

    def _resume(self) -> None:
        """Continue after the last record (repairing a torn tail first), with the header's run id."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if not size:
            return
        last = _last_line(self.path, size)
        if last is None or not _verified(last):
            from .repair import repair

            repair(self.path, ops=self.ops)  # raises JournalDamaged when it is more than a torn tail
            last = _last_line(self.path, os.path.getsize(self.path))
            if last is None or not _verified(last):
                raise JournalDamaged("the journal's last record does not verify after repair", path=self.path)
        rec = json.loads(last)
        self.next_lsn, self.last_h = int(rec["lsn"]) + 1, str(rec["h"])
        header = rec if rec.get("lsn") == 0 else json.loads(_first_line(self.path))
        self.run, self.agent = str(header.get("run") or ""), str(header.get("agent") or "main")

    def append(
        self,
        type: str,
        *,
        ref: int | None = None,
        sync: bool | None = None,
        agent: str | None = None,
        **fields: Any,
    ) -> int:
        """Append one v1 record and return its lsn; fsync it when its type (or ``sync``) says so.

        ``agent``: the envelope's agent id when it is not the header's (a subagent's call).

        Raises:
            JournalWriteFailed: the write or the fsync failed (nothing is retried).
        """
        assert self._fd is not None, "append outside the with block"
        rec: dict[str, Any] = {
            "v": FORMAT_VERSION,
            "lsn": self.next_lsn,
            "ts": now_iso(),
            "run": self.run,
            "agent": agent or self.agent,
            "type": type,
        }
        if ref is not None:
            rec["ref"] = ref
        rec.update(fields)
        rec["prev"] = self.last_h
        line, h = seal(dumps(rec)[:-1])
        try:
            self.ops.write(self._fd, line)
            if sync or (sync is None and type in SYNC_TYPES):
                self.ops.fdatasync(self._fd)
        except OSError as e:
            raise JournalWriteFailed(f"{type} not durable: {e.strerror or e}", path=self.path) from None
        lsn, self.next_lsn, self.last_h = self.next_lsn, self.next_lsn + 1, h
        return lsn

    def close(self) -> None:
        """Close the journal and release the lock. Safe to call twice."""
        for fd in (self._fd, self._lock):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._lock = None


def _verified(line: bytes) -> bool:
    stored, computed = line_hash(line)
    return stored is not None and stored == computed


def _last_line(path: Path, size: int) -> bytes | None:
    """The journal's last line without its newline, or None when the file does not end in one."""
    with open(path, "rb") as f:
        pos, buf = size, b""
        while pos > 0:
            n = min(TAIL_BLOCK, pos)
            pos -= n
            f.seek(pos)
            buf = f.read(n) + buf
            if not buf.endswith(b"\n"):
                return None
            cut = buf.rfind(b"\n", 0, len(buf) - 1)
            if cut >= 0 or pos == 0:
                return buf[cut + 1 : -1]
    return None


def _first_line(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.readline()
