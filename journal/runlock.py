"""The run lock: one live writer per run directory, and a way to tell "running" from "crashed".

The agent holds an exclusive ``flock`` on ``run_dir/lock`` while it runs. The kernel drops the
lock when the process dies, however it dies, so a held lock means a live writer and a journal
without ``run.end`` whose lock is free means a crash.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from .errors import JournalError
from .fileops import naming

LOCK_NAME = "lock"


class RunLock:
    """Exclusive lock on a run directory, held for the life of the object (or the process)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalError(
                "another process is writing this run (its lock is held)", path=self.path
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as e:
            os.close(fd)
            raise naming(e, self.path) from None
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_is_held(run_dir: str | Path) -> bool:
    """True while a live process holds the run's lock."""
    path = Path(run_dir) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
