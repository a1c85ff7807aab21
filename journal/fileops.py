"""Every durable file operation of walkback goes through one object, so tests can record it.

The journal writer, the blob store and the agent's file tools call ``FileOps`` methods instead of
``os`` directly. Production uses :data:`OS`; the power-loss tests substitute a recording subclass
that logs writes, fsyncs and renames and later materialises crash states (ALICE / SQLite crash VFS
model). Keeping the surface this small is what makes that substitution honest.
"""

from __future__ import annotations

import os
from pathlib import Path


class FileOps:
    """Real file operations (the default)."""

    def open_append(self, path: Path) -> int:
        """Open ``path`` for appending, creating it, and return the descriptor."""
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def open_new(self, path: Path) -> int:
        """Create ``path`` (truncating) for writing and return the descriptor."""
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    def write(self, fd: int, data: bytes) -> None:
        """Write all of ``data`` (loops over short writes)."""
        n = os.write(fd, data)
        if n < len(data):
            view = memoryview(data)[n:]
            while view:
                view = view[os.write(fd, view) :]

    def fdatasync(self, fd: int) -> None:
        os.fdatasync(fd)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def close(self, fd: int) -> None:
        os.close(fd)

    def replace(self, src: Path, dst: Path) -> None:
        os.replace(src, dst)

    def unlink(self, path: Path) -> None:
        os.unlink(path)

    def link(self, src: Path, dst: Path) -> None:
        """Hard-link ``src`` as ``dst`` (a journal segment archived before its live name moves on)."""
        os.link(src, dst)

    def truncate(self, path: Path, size: int) -> None:
        os.truncate(path, size)

    def mkdir(self, path: Path) -> None:
        """Create ``path`` and missing parents, fsyncing each new directory's parent."""
        missing: list[Path] = []
        p = path
        while not p.exists():
            missing.append(p)
            p = p.parent
        for d in reversed(missing):
            try:
                os.mkdir(d)
            except FileExistsError:
                continue  # made meanwhile by another process; its creator syncs it
            self.fsync_dir(d.parent)

    def fsync_dir(self, path: Path) -> None:
        """fsync a directory so that entries created or renamed in it survive a power loss."""
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


OS = FileOps()
"""The process-wide real implementation."""


def atomic_write(path: Path, data: bytes, *, ops: FileOps = OS, tmp_suffix: str = ".wb-tmp") -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new content.

    Temp file in the same directory, write, fsync, rename over the target, fsync the directory.
    The temp file is removed if anything before the rename fails.
    """
    tmp = path.with_name(path.name + tmp_suffix)
    fd = ops.open_new(tmp)
    try:
        try:
            ops.write(fd, data)
            ops.fsync(fd)
        finally:
            ops.close(fd)
        ops.replace(tmp, path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
    ops.fsync_dir(path.parent)
