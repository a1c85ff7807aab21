"""Importers for SWE-agent trajectories (``<instance>.traj``, 0.x and 1.x; ``swe-agent``) and
mini-swe-agent's ``<instance>.traj.json`` (``mini-swe-agent``): two formats, one family (the same
submission, exit statuses and details). See ``docs/formats/swe-agent.md`` and
``docs/formats/mini-swe-agent.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK
from ..records import BOM
from ._details import details
from ._mini import NAME as MINI_NAME
from ._mini import MiniReader
from ._traj import TrajReader

NAME = "swe-agent"
TAIL_BYTES = 4096
_TRAJ = re.compile(rb'^\{\s*"(?:environment|trajectory|history|info|replay_config)"\s*:')
_STEPS = re.compile(rb'"trajectory"\s*:\s*\[\s*(?:\]|\{\s*"(?:action|response|thought|observation)"\s*:)')
_MINI = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent')


def _tail(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(size - TAIL_BYTES, 0))
            return f.read()
    except OSError:
        return b""


def is_mini(path: Path, head: bytes) -> bool:
    """A mini-swe-agent trajectory: its ``trajectory_format`` (written last) says so."""
    return bool(_MINI.search(head) or _MINI.search(_tail(path)))


def _document(data: bytes) -> bytes:
    """The head of a JSON object document (empty for anything else)."""
    start = data.removeprefix(BOM).lstrip()
    return start if start.startswith(b"{") else b""


class SweAgent:
    """SWE-agent's ``.traj`` (see the module docstring)."""

    name = NAME

    def score(self, path: Path, data: bytes) -> int:
        start = _document(data)
        if path.is_dir() or not start or is_mini(path, start):
            return NO
        if _TRAJ.match(start) and _STEPS.search(start):
            return CERTAIN
        if path.name.endswith((".traj", ".traj.json")):
            return LIKELY if b'"trajectory"' in start else WEAK
        return NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from TrajReader(b, path).read()

    details = staticmethod(details)


class MiniSweAgent:
    """mini-swe-agent's ``.traj.json``, 1.x and 2.x (see the module docstring)."""

    name = MINI_NAME

    def score(self, path: Path, data: bytes) -> int:
        start = _document(data)
        if path.is_dir() or not start:
            return NO
        if is_mini(path, start) and b'"messages"' in start + _tail(path):
            return CERTAIN
        if path.name.endswith(".traj.json") and b'"messages"' in start and b'"trajectory"' not in start:
            return LIKELY
        return NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from MiniReader(b, path).read()

    details = staticmethod(details)


IMPORTER = SweAgent()
MINI = MiniSweAgent()
