"""Helpers for the journal tests: a recording FileOps and line surgery."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from walkback.journal.fileops import FileOps


class RecordingOps(FileOps):
    """Real file operations that also log what they did, in order: ``(op, path, detail)``.

    ``fail`` maps an op name to the OSError its next call raises (after logging the attempt),
    to test what the writer does when the disk says no.
    """

    def __init__(self) -> None:
        self.log: list[tuple[str, str, object]] = []
        self.names: dict[int, str] = {}
        self.fail: dict[str, OSError] = {}

    def _maybe_fail(self, op: str) -> None:
        err = self.fail.pop(op, None)
        if err is not None:
            raise err

    def open_append(self, path: Path) -> int:
        fd = super().open_append(path)
        self.names[fd] = str(path)
        self.log.append(("open_append", str(path), None))
        return fd

    def open_new(self, path: Path) -> int:
        fd = super().open_new(path)
        self.names[fd] = str(path)
        self.log.append(("open_new", str(path), None))
        return fd

    def write(self, fd: int, data: bytes) -> None:
        self.log.append(("write", self.names[fd], bytes(data)))
        self._maybe_fail("write")
        super().write(fd, data)

    def fdatasync(self, fd: int) -> None:
        self.log.append(("fdatasync", self.names[fd], None))
        self._maybe_fail("fdatasync")
        super().fdatasync(fd)

    def fsync(self, fd: int) -> None:
        self.log.append(("fsync", self.names[fd], None))
        self._maybe_fail("fsync")
        super().fsync(fd)

    def close(self, fd: int) -> None:
        self.log.append(("close", self.names.get(fd, "?"), None))
        super().close(fd)

    def replace(self, src: Path, dst: Path) -> None:
        self.log.append(("replace", str(dst), str(src)))
        super().replace(src, dst)

    def fsync_dir(self, path: Path) -> None:
        self.log.append(("fsync_dir", str(path), None))
        super().fsync_dir(path)

    def ops(self, name: str, path: str | Path | None = None) -> list[int]:
        """Positions in the log of ``name`` calls (on ``path`` if given)."""
        return [i for i, (op, p, _) in enumerate(self.log) if op == name and (path is None or p == str(path))]


def eio() -> OSError:
    return OSError(errno.EIO, os.strerror(errno.EIO))


def lines_of(path: Path) -> list[bytes]:
    """The file's lines, each with its newline."""
    return path.read_bytes().splitlines(keepends=True)
