"""Importer for Cline and Roo Code task folders (VS Code's ``globalStorage/saoudrizwan.claude-dev/
tasks/<task id>/`` or ``rooveterinaryinc.roo-cline/tasks/<task id>/``). See
``docs/formats/cline.md``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK
from ..records import BOM
from ._details import details
from ._read import API, META, UI, read_task

NAME = "cline"


class Cline:
    """A task folder (or one of its three files): UI messages, API history, task metadata."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return CERTAIN if (path / UI).is_file() else NO
        if path.name == UI:
            return CERTAIN
        if path.name in (API, META):
            return LIKELY if (path.parent / UI).is_file() else WEAK
        start = head.removeprefix(BOM).lstrip()[:200]
        if start.startswith(b"[") and b'"ts"' in start and (b'"say"' in start or b'"ask"' in start):
            return LIKELY  # an array of UI messages under another name
        return NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from read_task(b, path)

    details = staticmethod(details)


IMPORTER = Cline()
