"""Importer for Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.jsonl`` and the legacy
``session-*.json``). See ``docs/formats/gemini-cli.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, NO, WEAK
from ..records import BOM, first_line_record
from ._details import details
from ._read import read_chat

NAME = "gemini-cli"
_DOCUMENT = re.compile(rb'^\{\s*"(?:sessionId|projectHash)"\s*:')


class GeminiCli:
    """Gemini CLI chats, both layouts (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return NO
        start = head.removeprefix(BOM).lstrip()
        rec = first_line_record(start)
        if (
            rec is not None
            and isinstance(rec.get("sessionId"), str)
            and isinstance(rec.get("projectHash"), str)
        ):
            return CERTAIN  # the JSONL header (only Gemini writes projectHash)
        if _DOCUMENT.match(start) and b'"projectHash"' in start and b'"messages"' in start:
            return CERTAIN  # the legacy document
        return WEAK if path.name.startswith("session-") and path.suffix in (".json", ".jsonl") else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from read_chat(b, path)

    details = staticmethod(details)


IMPORTER = GeminiCli()
