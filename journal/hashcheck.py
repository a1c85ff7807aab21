"""Line hashes checked by a child process, so a big journal is parsed and hashed on two cores.

Hashing a line costs about as much as parsing it, and CPython parses and hashes on one core. For a
journal of at least :data:`MIN_BYTES`, the reader starts ``_hashworker.py`` (standard library
only), which reads the same file and reports for each line whether its ``h`` is the sha256 of its
body, tagged with the line's length. The reader's own checks (parse, ``prev``, lsn, version) stay
in the reader; a line the worker did not vouch for, or whose tag does not match, is hashed
in-process as before. If the worker cannot start or stops early, everything is hashed in-process;
on a single-core machine it is not started at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from array import array
from itertools import repeat
from pathlib import Path

MIN_BYTES = 32 << 20
WORKER = Path(__file__).with_name("_hashworker.py")


class HashWorker:
    """The child process and the stream of its per-line tags."""

    def __init__(self, path: Path, offset: int) -> None:
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-I", str(WORKER), str(path), str(offset)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )

    def tags(self, n: int) -> array[int] | repeat[int]:
        """The tags of the next ``n`` lines (zeros, meaning "not vouched for", once it has stopped)."""
        if self.proc is None or self.proc.stdout is None:
            return repeat(0, n)
        want = 2 * n
        chunks: list[bytes] = []
        fd = self.proc.stdout.fileno()
        while want:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        data = b"".join(chunks)
        if want or len(data) % 2:
            self.close()
            return repeat(0, n)
        tags = array("H", data)
        if sys.byteorder != "little":
            tags.byteswap()
        return tags

    def close(self) -> None:
        stop(self.proc)
        self.proc = None


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """End a helper process of a read (it may still be running) and close its pipes."""
    if proc is not None:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def core_free() -> bool:
    """True on a machine with a second core. (Load is not consulted: measured on a 2-core box at
    load 6, the worker still cut the wall time of a read by 40%, the scheduler giving the pair a
    larger share.)"""
    return (os.cpu_count() or 1) >= 2


def start(path: Path, offset: int, size: int) -> HashWorker | None:
    """A worker for the rest of ``path`` from ``offset``, if it is big enough to gain from one."""
    if size - offset < MIN_BYTES or not core_free():
        return None
    try:
        return HashWorker(path, offset)
    except OSError:
        return None
