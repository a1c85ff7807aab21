"""Importer for Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

A rollout file brings the rollouts of its subagents found beside it; a folder holding one
rollout and its subagents' is one session too. See ``docs/formats/codex.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK
from ..records import BOM, first_line_record
from ._details import details
from ._read import family, head, one_tree, read_family, rollouts_in

NAME = "codex"
_META = re.compile(
    rb'^\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:\s*\{'
)
_ENVELOPE = re.compile(
    rb'"type"\s*:\s*"(?:response_item|event_msg|turn_context|compacted)"\s*,\s*"payload"\s*:\s*\{'
)


class Codex:
    """Codex CLI rollouts (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head_bytes: bytes) -> int:
        if path.is_dir():
            rollouts = rollouts_in(path)
            return CERTAIN if len(rollouts) > 1 and one_tree(rollouts) else NO
        first = head_bytes.removeprefix(BOM).lstrip()
        if _META.match(first) or _meta_line(first):
            return CERTAIN
        lines = first.split(b"\n", 8)[:8]
        if lines and all(_ENVELOPE.search(line) for line in lines if line.strip()):
            return LIKELY  # a rollout whose session_meta line is missing
        return WEAK if path.name.startswith("rollout-") and path.suffix == ".jsonl" else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        if path.is_dir():
            rollouts = one_tree(rollouts_in(path))
            if not rollouts:
                raise ImporterError("not one Codex session: no rollouts, or rollouts of several", path=path)
        else:
            root = head(path)
            siblings = [r for r in rollouts_in(path.parent) if r.path != path] if root.thread else []
            rollouts = family(root, siblings)
        yield from read_family(b, rollouts)

    details = staticmethod(details)


def _meta_line(data: bytes) -> bool:
    """The first line is a ``session_meta`` record in whatever key order."""
    rec = first_line_record(data)
    return rec is not None and rec.get("type") == "session_meta" and isinstance(rec.get("payload"), dict)


IMPORTER = Codex()
