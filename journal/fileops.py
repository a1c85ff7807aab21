"""Every durable file operation of walkback goes through one object, so tests can record it.

The journal writer, the blob store and the agent's file tools call ``FileOps`` methods instead of
``os`` directly. Production uses :data:`OS`; the power-loss tests substitute a recording subclass
that logs writes, fsyncs and renames and later materialises crash states (ALICE / SQLite crash VFS
model). Keeping the surface this small is what makes that substitution honest.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
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
    return path.with_name(f".{path.name[:200]}.{os.urandom(8).hex()}{TMP_MARK}")


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


def home_path(target: str) -> Path | None:
    """A target written ``~/x`` or ``~user/x``, read as a shell reads it: the path in that home
    folder, or None when it names no known user. Models write ``~`` for the home folder; a folder
    named ``~`` inside the workspace is never what they mean, so the callers check the expanded
    path against the workspace like any absolute one (outside it, it is refused)."""
    expanded = Path(os.path.expanduser(target))
    return expanded if expanded.is_absolute() else None


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


@contextmanager
def atomic_file(
    path: Path,
    *,
    ops: FileOps = OS,
    root: Path | None = None,
    durable: bool = True,
    sweep: bool = False,
) -> Iterator[int]:
    """A descriptor to write ``path``'s new content into, so that a crash leaves either the old
    content or the new one (or, when there was none, no file), never a part of it.

    Temp file (:func:`temp_path`, created exclusively, held locked while it is written) in the same
    directory, the caller writes, fsync, rename over the target, fsync the directory. The temp file
    is removed if anything before the rename fails, and an ``OSError`` names ``path``, not the
    hidden temp file.

    Args:
        root: the target must stay inside it (:func:`confined`).
        durable: False fsyncs nothing: a kill leaves old or new, a power loss may leave anything.
        sweep: first remove the temp files a killed earlier write of ``path`` left
            (:func:`sweep_temps`).
    """
    if root is not None:
        path = confined(root, path)
    if sweep:
        sweep_temps(path, ops=ops)
    tmp = temp_path(path)
    try:
        fd = _locked_new(tmp, ops)
        try:
            yield fd
            if durable:
                ops.fsync(fd)
        finally:
            ops.close(fd)
        ops.replace(tmp, path)
    except BaseException as e:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            if e.filename in (None, str(tmp)):
                e.filename = str(path)
            raise e from None
        raise
    if durable:
        ops.fsync_dir(path.parent)


def atomic_write(
    path: Path, data: bytes, *, ops: FileOps = OS, root: Path | None = None, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new content
    (:func:`atomic_file`)."""
    with atomic_file(path, ops=ops, root=root, durable=durable) as fd:
        ops.write(fd, data)


def _locked_new(tmp: Path, ops: FileOps) -> int:
    """Create ``tmp`` and hold an exclusive lock on it: :func:`sweep_temps` leaves a temp file alone
    while its writer lives (the kernel drops the lock when the writer dies)."""
    fd = ops.open_new(tmp)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a sweeper holds it only for the moment it takes to unlink
        if os.lstat(tmp).st_ino != os.fstat(fd).st_ino:  # swept between the open and the lock
            raise FileNotFoundError(errno.ENOENT, "the temp file was removed while it was made", str(tmp))
    except BaseException:
        ops.close(fd)
        raise
    return fd


def sweep_temps(path: Path, *, ops: FileOps = OS) -> list[Path]:
    """Remove the temp files of ``path`` (:func:`stale_temps`) that no live writer holds: those a
    killed write left. Returns what was removed."""
    removed = []
    for tmp in stale_temps(path):
        try:
            fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.lstat(tmp).st_ino == os.fstat(fd).st_ino:
                ops.unlink(tmp)
                removed.append(tmp)
        except OSError:
            continue  # held: a write in progress (another process's)
        finally:
            os.close(fd)
    if removed:
        ops.fsync_dir(path.parent)
    return removed
