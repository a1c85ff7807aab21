"""A recording FileOps and the crash states a power loss could leave (ALICE's model, SQLite's VFS).

:class:`RecordingOps` is a :class:`journal.fileops.FileOps` that performs every operation for real
(so the run it serves proceeds normally) and also logs it as an :class:`Op`: file creation,
sequential writes, fsync/fdatasync, rename, unlink, truncate and directory fsync. The journal
writer, the blob store and the agent's file tools all take ``ops=``, so one recorder sees every
durable write of a run.

:func:`crash_states` replays a prefix of that log on a model of a file system whose page cache is
lost at the crash (pessimistic, per file and per directory):

* a file's data is durable up to its last fsync; unsynced writes may be lost (``drop``), all land
  (``full``), be torn at a 512-byte sector boundary (``torn@N``), land as NULs with the size
  persisted (``nul``), or land out of order — the last one without those before it (``reorder``);
* a directory entry (create, rename, unlink) is durable once its directory was fsynced after it;
  later ones may be lost (``meta-lost``: e.g. a rename without its directory fsync), kept in part
  (``meta-P-of-N``: the first P, in order) or all kept — and kept entries with dropped data are
  the "rename persisted without its data" state.

Directories themselves are always present: ``FileOps.mkdir`` fsyncs the parent right after each
``mkdir``, so no file can exist in a directory whose entry could still be lost; empty extra
directories are harmless.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from walkback.journal.fileops import FileOps

SECTOR = 512


@dataclass(frozen=True)
class Op:
    """One logged operation. ``path`` is relative to the recorder's root."""

    kind: str
    """``create``, ``write``, ``sync``, ``truncate``, ``replace``, ``unlink`` or ``dirsync``."""
    inode: int = -1
    path: str = ""
    src: str = ""
    data: bytes = b""
    offset: int = 0


class RecordingOps(FileOps):
    """Real file operations under ``root``, each also appended to :attr:`log`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.log: list[Op] = []
        self.initial: dict[str, bytes] = {
            p.relative_to(self.root).as_posix(): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(self.root).parts
        }
        """Every file under ``root`` (outside ``.git``) before the first operation."""
        self._inodes: dict[str, int] = {path: i for i, path in enumerate(self.initial)}
        self._next = len(self.initial)
        self._fds: dict[int, tuple[int, int]] = {}
        """fd -> (inode, offset of the next write)."""

    def rel(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.root).as_posix()

    def _open(self, path: Path, fd: int, existed: bool, append: bool) -> int:
        rel = self.rel(path)
        if existed and rel in self._inodes:
            inode = self._inodes[rel]
            if not append:
                self.log.append(Op("truncate", inode, rel, offset=0))
        else:
            inode, self._next = self._next, self._next + 1
            self._inodes[rel] = inode
            self.log.append(Op("create", inode, rel))
        self._fds[fd] = (inode, os.fstat(fd).st_size if append else 0)
        return fd

    def open_append(self, path: Path) -> int:
        existed = Path(path).exists()
        return self._open(path, super().open_append(path), existed, append=True)

    def open_new(self, path: Path) -> int:
        existed = Path(path).exists()
        return self._open(path, super().open_new(path), existed, append=False)

    def write(self, fd: int, data: bytes) -> None:
        super().write(fd, data)
        inode, offset = self._fds[fd]
        self.log.append(Op("write", inode, data=bytes(data), offset=offset))
        self._fds[fd] = (inode, offset + len(data))

    def fdatasync(self, fd: int) -> None:
        super().fdatasync(fd)
        self.log.append(Op("sync", self._fds[fd][0]))

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self.log.append(Op("sync", self._fds[fd][0]))

    def close(self, fd: int) -> None:
        super().close(fd)
        del self._fds[fd]

    def replace(self, src: Path, dst: Path) -> None:
        super().replace(src, dst)
        s, d = self.rel(src), self.rel(dst)
        self._inodes[d] = self._inodes.pop(s)
        self.log.append(Op("replace", self._inodes[d], d, src=s))

    def unlink(self, path: Path) -> None:
        super().unlink(path)
        rel = self.rel(path)
        self.log.append(Op("unlink", self._inodes.pop(rel, -1), rel))

    def truncate(self, path: Path, size: int) -> None:
        super().truncate(path, size)
        rel = self.rel(path)
        self.log.append(Op("truncate", self._inodes[rel], rel, offset=size))

    def fsync_dir(self, path: Path) -> None:
        super().fsync_dir(path)
        self.log.append(Op("dirsync", path=self.rel(path)))


@dataclass
class _Inode:
    synced: bytearray
    """Content as of the last fsync."""
    data: bytearray
    """Content as the process saw it."""
    pending: list[tuple[int, bytes]] = field(default_factory=list)
    """Writes since the last fsync: (offset, bytes)."""


@dataclass(frozen=True)
class CrashState:
    """The files a crash after ``ops[:at]`` may leave, and how they were chosen."""

    at: int
    variant: str
    files: dict[str, bytes]
    durable: dict[str, bytes]
    """What was certainly durable at the crash (synced data under durable entries): every state
    of this crash point contains it, so nothing in it may ever be lost."""

    @property
    def key(self) -> str:
        h = hashlib.sha256()
        for path in sorted(self.files):
            h.update(path.encode() + b"\0" + hashlib.sha256(self.files[path]).digest())
        return h.hexdigest()


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


class _Replay:
    """The model's state after replaying a prefix of the log."""

    def __init__(self, initial: dict[str, bytes]) -> None:
        self.inodes = {i: _Inode(bytearray(b), bytearray(b)) for i, b in enumerate(initial.values())}
        self.durable: dict[str, int] = {path: i for i, path in enumerate(initial)}
        self.volatile = dict(self.durable)
        self.meta: list[Op] = []
        """Entry operations not yet made durable by a directory fsync."""

    def apply(self, op: Op) -> None:
        if op.kind == "create":
            self.inodes[op.inode] = _Inode(bytearray(), bytearray())
            self.volatile[op.path] = op.inode
            self.meta.append(op)
        elif op.kind == "write":
            ino = self.inodes[op.inode]
            end = op.offset + len(op.data)
            ino.data[len(ino.data) :] = bytes(max(0, end - len(ino.data)))
            ino.data[op.offset : end] = op.data
            ino.pending.append((op.offset, op.data))
        elif op.kind == "sync":
            ino = self.inodes[op.inode]
            ino.synced, ino.pending = bytearray(ino.data), []
        elif op.kind == "truncate":
            ino = self.inodes[op.inode]
            del ino.data[op.offset :]
            del ino.synced[op.offset :]  # a truncate is treated as durable at once (pessimism is elsewhere)
            ino.pending = [(o, d[: max(0, op.offset - o)]) for o, d in ino.pending if o < op.offset]
        elif op.kind in ("replace", "unlink"):
            if op.kind == "replace":
                self.volatile[op.path] = self.volatile.pop(op.src)
            else:
                self.volatile.pop(op.path, None)
            self.meta.append(op)
        elif op.kind == "dirsync":
            keep = []
            for m in self.meta:
                if op.path in {_parent(m.path), _parent(m.src) if m.src else ""}:
                    _entry(self.durable, m)
                else:
                    keep.append(m)
            self.meta = keep

    def names(self, pending: int) -> dict[str, int]:
        """Entries with the first ``pending`` non-durable entry operations applied."""
        names = dict(self.durable)
        for m in self.meta[:pending]:
            _entry(names, m)
        return names


def _entry(names: dict[str, int], m: Op) -> None:
    if m.kind == "create":
        names[m.path] = m.inode
    elif m.kind == "replace":
        names.pop(m.src, None)
        names[m.path] = m.inode
    elif m.kind == "unlink":
        names.pop(m.path, None)


def _data_variants(ino: _Inode) -> Iterator[tuple[str, bytes]]:
    """The contents an inode with unsynced writes may have after the crash (besides ``drop``)."""
    synced = bytes(ino.synced)
    yield "full", bytes(ino.data)
    start, end = len(synced), len(ino.data)
    cuts = [c for c in range((start // SECTOR + 1) * SECTOR, end, SECTOR)]
    for c in sorted({cuts[0], cuts[len(cuts) // 2], cuts[-1]} if cuts else set()):
        yield f"torn@{c}", bytes(ino.data[:c])
    if end > start:
        yield "nul", synced + bytes(end - start)
    if len(ino.pending) >= 2:
        off, last = ino.pending[-1]
        out = bytearray(synced) + bytes(max(0, off - start))
        out[off : off + len(last)] = last
        yield "reorder", bytes(out)


def crash_states(initial: dict[str, bytes], log: list[Op], points: list[int]) -> Iterator[CrashState]:
    """Every modelled state for a crash after ``log[:k]``, for each ``k`` in ``points``."""
    rep = _Replay(initial)
    done = 0
    for k in sorted(points):
        for op in log[done:k]:
            rep.apply(op)
        done = k

        def files(names: dict[str, int], override: dict[int, bytes] | None = None) -> dict[str, bytes]:
            over = override or {}
            return {p: over.get(i, bytes(rep.inodes[i].synced)) for p, i in names.items()}

        lost, kept = rep.names(0), rep.names(len(rep.meta))
        durable = files(lost)
        yield CrashState(k, "meta-lost,drop", durable, durable)
        for p in range(1, len(rep.meta)):
            yield CrashState(k, f"meta-{p}-of-{len(rep.meta)},drop", files(rep.names(p)), durable)
        yield CrashState(k, "drop", files(kept), durable)
        dirty = {i: ino for i, ino in rep.inodes.items() if ino.pending and i in kept.values()}
        yield CrashState(k, "full", files(kept, {i: bytes(ino.data) for i, ino in dirty.items()}), durable)
        for i, ino in dirty.items():
            name = next(p for p, j in kept.items() if j == i)
            for variant, content in _data_variants(ino):
                if variant != "full":
                    yield CrashState(k, f"{variant}:{name}", files(kept, {i: content}), durable)


def sync_points(log: list[Op]) -> list[int]:
    """Crash points: just before every fsync (file or directory), and after the last operation."""
    return [k for k, op in enumerate(log) if op.kind in ("sync", "dirsync")] + [len(log)]


def materialise(state: CrashState, root: Path, dirs: list[str]) -> None:
    """Write ``state``'s files and the directories ``dirs`` under ``root``."""
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for path, data in state.files.items():
        p = root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
