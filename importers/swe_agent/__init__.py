"""Importer for SWE-agent trajectories (``<instance>.traj``, 0.x and 1.x) and mini-swe-agent's
``<instance>.traj.json``. See ``docs/formats/swe-agent.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK, head
from ..records import BOM
from ._details import details
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


class SweAgent:
    """SWE-agent and mini-swe-agent trajectories (see the module docstring)."""

    name = NAME

    def score(self, path: Path, data: bytes) -> int:
        if path.is_dir():
            return NO
        start = data.removeprefix(BOM).lstrip()
        if not start.startswith(b"{"):
            return NO
        if _TRAJ.match(start) and _STEPS.search(start):
            return CERTAIN
        if is_mini(path, start) and b'"messages"' in start + _tail(path):
            return CERTAIN
        if path.name.endswith((".traj", ".traj.json")):
            return LIKELY if b'"trajectory"' in start or b'"messages"' in start else WEAK
        return NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        start = head(path)
        mini = is_mini(path, start) or (b'"messages"' in start and b'"trajectory"' not in start)
        yield from (MiniReader(b, path) if mini else TrajReader(b, path)).read()

    details = staticmethod(details)


IMPORTER = SweAgent()
