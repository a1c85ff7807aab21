"""Importer for Aider chat histories (``.aider.chat.history.md`` in the repository, with
``.aider.input.history`` and ``.aider.llm.history`` beside it when they are there). See
``docs/formats/aider.md``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK
from ..records import BOM
from ._details import details
from ._read import read_history, run_offsets
from ._scan import HEADER

NAME = "aider"
HISTORY = ".aider.chat.history.md"


class Aider:
    """Aider's markdown chat history: the whole file, or one run of it (``PATH#3``)."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return NO
        start = head.removeprefix(BOM)
        if start.startswith(HEADER) or b"\n" + HEADER in start:
            return CERTAIN  # only Aider starts a run with this line
        if b"\n#### " in start and b"\n> Tokens: " in start:
            return LIKELY
        return WEAK if path.name == HISTORY else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from read_history(b, path, part)

    def parts(self, path: Path) -> list[str]:
        """The runs of the file, ``"1"`` to ``"N"`` (none when it holds one run or none)."""
        try:
            runs = run_offsets(path)
        except OSError:
            return []
        return [str(k) for k in range(1, len(runs) + 1)] if len(runs) > 1 else []

    details = staticmethod(details)


IMPORTER = Aider()
