"""Side channel for the torture tests: what a process acknowledged, observed from outside it.

Put this directory on ``PYTHONPATH`` and every Python process the test starts (the agent, its
subagents, a resume) loads it. It changes no behaviour; it only reports, to files outside the
journal's file system paths:

* ``WALKBACK_TORTURE_ACKS=FILE``: after each ``FileOps.fdatasync`` of a journal *returns*, one
  line ``<journal path> TAB <lsn> TAB <h> TAB <unix time>`` naming the last record that fsync made
  durable. A
  record listed here was acknowledged, so no crash or recovery may ever lose it.
* ``WALKBACK_TORTURE_CENSUS=FILE``: one line ``<agent> TAB <failpoint>`` per failpoint reached,
  so a clean run tells the torture sweep which failpoints each agent passes and how often.

The hook wraps the modules when they are first imported (a meta-path finder), so processes that
never import ``walkback.journal`` (the tests a task runs) pay nothing.
"""

from __future__ import annotations

import importlib.abc
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

_LAST = re.compile(rb'"lsn":(\d+).*,"h":"([0-9a-f]{64})"\}\n\Z', re.S)


def _log(env: str) -> Callable[[str], None] | None:
    path = os.environ.get(env)
    if not path:
        return None
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    return write


def _last_record(path: str, size: int) -> tuple[int, str] | None:
    """lsn and h of the last complete line before ``size`` (the writer's fd is write-only)."""
    back = min(size, 1 << 16)
    with open(path, "rb") as f:
        f.seek(size - back)
        tail = f.read(back)
    start = tail.rfind(b"\n", 0, len(tail) - 1) + 1
    m = _LAST.search(tail[start:])
    return (int(m.group(1)), m.group(2).decode()) if m else None


def _patch_fileops(module: ModuleType, ack: Callable[[str], None]) -> None:
    real = module.FileOps.fdatasync

    def fdatasync(self: Any, fd: int) -> None:
        real(self, fd)
        path = os.readlink(f"/proc/self/fd/{fd}")
        if path.endswith("journal.jsonl"):
            last = _last_record(path, os.fstat(fd).st_size)
            if last is not None:
                ack(f"{path}\t{last[0]}\t{last[1]}\t{time.time():.6f}")

    module.FileOps.fdatasync = fdatasync


def _patch_failpoints(module: ModuleType, census: Callable[[str], None]) -> None:
    real = module.failpoint

    argv = sys.argv[1:4]
    agent = os.path.basename(argv[2].rstrip("/")) if argv[:2] == ["agent", "child"] else "main"

    def failpoint(name: str) -> None:
        census(f"{agent}\t{name}")
        real(name)

    module.failpoint = failpoint


class _Hook(importlib.abc.MetaPathFinder):
    def __init__(self, patches: dict[str, Callable[[ModuleType], None]]) -> None:
        self.patches = patches

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        patch = self.patches.pop(name, None)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(name, path, target)  # type: ignore[attr-defined]
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        loader = spec.loader
        real_exec = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            real_exec(module)
            patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _install() -> None:
    patches: dict[str, Callable[[ModuleType], None]] = {}
    ack, census = _log("WALKBACK_TORTURE_ACKS"), _log("WALKBACK_TORTURE_CENSUS")
    if ack is not None:
        patches["walkback.journal.fileops"] = lambda m: _patch_fileops(m, ack)
    if census is not None:
        patches["walkback.journal.failpoints"] = lambda m: _patch_failpoints(m, census)
    if patches:
        sys.meta_path.insert(0, _Hook(patches))


_install()
