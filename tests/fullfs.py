"""A real full disk for tests: a small tmpfs mounted in a temp folder (root only), filled up.

``tests/agent/test_disk_full.py`` and the import and export tests share it.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


class Disk:
    """A mounted tmpfs that can be filled to leave only ``free`` bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def fill(self, free: int) -> None:
        st = os.statvfs(self.root)
        room = st.f_bavail * st.f_frsize - free
        with open(self.root / "filler", "wb") as f:
            while room > 0:
                try:
                    room -= f.write(b"\0" * min(room, 1 << 16))
                except OSError as e:
                    assert e.errno == errno.ENOSPC
                    break


@contextmanager
def mounted(root: Path, size: str = "4m") -> Iterator[Disk]:
    """A tmpfs of ``size`` at ``root`` (made if missing), unmounted after; skips the test when
    mounting is not allowed here."""
    root.mkdir(exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(root)]
    p = subprocess.run(mount, capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.decode().strip()}")
    try:
        yield Disk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)
