"""Importer for GitHub Copilot CLI sessions: ``~/.copilot/session-state/<id>/events.jsonl`` (or its
folder) and the legacy single-document session JSON. See ``docs/formats/copilot-cli.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK
from ..fields import mapping
from ..records import BOM, first_line_record, first_record
from ._details import details
from ._legacy import LegacyReader
from ._read import EventsReader

NAME = "copilot-cli"
EVENTS = "events.jsonl"
_ENVELOPE = re.compile(
    rb'^\{"type":"(?:session|user|assistant|tool|system|permission|subagent|hook)\.[a-z_]+","data":\{'
)
_LEGACY_KEYS = (re.compile(rb'"chatMessages"\s*:\s*\['), re.compile(rb'"timeline"\s*:\s*\['))


def _is_start(rec: dict[str, object] | None) -> bool:
    """A ``session.start`` only Copilot writes (its ``copilotVersion`` or its producer)."""
    if rec is None or rec.get("type") != "session.start":
        return False
    data = mapping(rec.get("data"))
    return isinstance(data.get("copilotVersion"), str) or data.get("producer") == "copilot-agent"


class CopilotCli:
    """Copilot CLI sessions, both layouts (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return CERTAIN if _is_start(first_record(path / EVENTS)) else NO
        start = head.removeprefix(BOM).lstrip()
        if _is_start(first_line_record(start)):
            return CERTAIN
        if start.startswith(b"{"):  # the legacy session document
            found = [bool(k.search(start)) for k in _LEGACY_KEYS]
            if all(found) and b'"sessionId"' in start:
                return CERTAIN
            if any(found) and b'"sessionId"' in start and b'"projectHash"' not in start:
                return LIKELY
        lines = [line for line in start.split(b"\n", 8)[:8] if line.strip()]
        if lines and all(_ENVELOPE.match(line) for line in lines):
            return LIKELY  # events.jsonl whose first line is gone
        return WEAK if path.name == EVENTS else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        if path.is_dir():
            path = path / EVENTS
        if path.suffix == ".json":
            yield from LegacyReader(b, path).read()
        else:
            yield from EventsReader(b, path).read()

    details = staticmethod(details)


IMPORTER = CopilotCli()
