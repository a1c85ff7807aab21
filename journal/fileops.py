"""Every durable file operation of walkback goes through one object, so tests can record it.

The journal writer, the blob store and the agent's file tools call ``FileOps`` methods instead of
``os`` directly. Production uses :data:`OS`; the power-loss tests substitute a recording subclass
that logs writes, fsyncs and renames and later materialises crash states (ALICE / SQLite crash VFS
model). Keeping the surface this small is what makes that substitution honest.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .errors import OutsideWorkspace

TMP_MARK = ".wb-tmp"
"""Every temp file walkback writes ends with this: ``.<name>.<16 random hex>.wb-tmp`` beside its target."""


class FileOps:
    """Real file operations (the default)."""

    def open_append(self, path: Path) -> int:
        """Open ``path`` for appending, creating it, and return the descriptor."""
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def open_new(self, path: Path) -> int:
        """Create ``path`` for writing and return the descriptor; ``path`` must not exist, not even as
        a symbolic link (``O_EXCL | O_NOFOLLOW``): a name planted in advance is never written through."""
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)

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

    def mkdir(self, path: Path, *, durable: bool = True) -> None:
        """Create ``path`` and missing parents, fsyncing each new directory's parent (not when
        ``durable`` is False: for copies that may be lost)."""
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
            if durable:
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


def naming(e: OSError, path: Path) -> OSError:
    """``e`` with ``path`` as its file name when it has none (a write or fsync on a descriptor
    raises without one), so that the one line a failed command prints names the file."""
    if e.filename is None:
        e.filename = str(path)
    return e


def temp_path(path: Path) -> Path:
    """A fresh temp name beside ``path`` that nobody can predict, so nobody can plant a link there."""
    return path.with_name(f".{path.name[:200]}.{secrets.token_hex(8)}{TMP_MARK}")


def stale_temps(path: Path) -> list[Path]:
    """The temp files a crash mid-write may have left beside ``path`` (regular files only; also the
    fixed ``<name>.wb-tmp`` of earlier versions)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    prefix = f".{path.name[:200]}."
    return [
        path.parent / n
        for n in names
        if (n == path.name + TMP_MARK or (n.startswith(prefix) and n.endswith(TMP_MARK)))
        and (path.parent / n).is_file()
        and not (path.parent / n).is_symlink()
    ]


def confined(root: Path, path: Path) -> Path:
    """``path`` where a write, restore or delete of it really lands, if that stays inside ``root``.

    Its directory is resolved (symbolic links followed) and must be ``root`` or below it, and
    ``path`` itself must not be a symbolic link (a rename would replace the link; an unlink would
    remove it): what a workspace holds never sends a write elsewhere.

    Raises:
        OutsideWorkspace: the target resolves outside ``root``, or is a symbolic link.
    """
    base = root.resolve()
    parent = path.parent.resolve()
    if parent != base and base not in parent.parents:
        raise OutsideWorkspace(f"refused: it is in {parent}, outside the workspace {base}", path=path)
    if path.is_symlink():
        raise OutsideWorkspace("refused: the target is a symbolic link (not written through)", path=path)
    return parent / path.name


def atomic_write(
    path: Path, data: bytes, *, ops: FileOps = OS, root: Path | None = None, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new content.

    Temp file (:func:`temp_path`, created exclusively) in the same directory, write, fsync, rename
    over the target, fsync the directory. The temp file is removed if anything before the rename
    fails. With ``root``, the target must stay inside it (:func:`confined`). With ``durable``
    False nothing is fsynced: a kill leaves old or new, a power loss may leave anything.
    """
    if root is not None:
        path = confined(root, path)
    tmp = temp_path(path)
    try:
        fd = ops.open_new(tmp)
        try:
            ops.write(fd, data)
            if durable:
                ops.fsync(fd)
        finally:
            ops.close(fd)
        ops.replace(tmp, path)
    except BaseException as e:
        if tmp.exists():
            tmp.unlink()
        if isinstance(e, OSError):
            raise naming(e, path) from None
        raise
    if durable:
        ops.fsync_dir(path.parent)
