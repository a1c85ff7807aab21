"""Importers for Cline task folders (VS Code's ``globalStorage/saoudrizwan.claude-dev/tasks/<task
id>/``; ``cline``) and Roo Code's (``rooveterinaryinc.roo-cline/tasks/<task id>/``; ``roo-code``,
with its subtasks: :mod:`._roo`): one layout, two formats. See ``docs/formats/cline.md``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO, WEAK, head
from ..records import BOM
from ._details import details
from ._read import API, META, UI, read_task, ui_file
from ._roo import is_roo, read_roo

NAME = "cline"
ROO_NAME = "roo-code"


def _score(path: Path, data: bytes) -> int:
    """How sure the layout makes us that ``path`` is a task folder of Cline's kind (either tool)."""
    if path.is_dir():
        return CERTAIN if (path / UI).is_file() else NO
    if path.name == UI:
        return CERTAIN
    if path.name in (API, META):
        return LIKELY if (path.parent / UI).is_file() else WEAK
    start = data.removeprefix(BOM).lstrip()[:200]
    if start.startswith(b"[") and b'"ts"' in start and (b'"say"' in start or b'"ask"' in start):
        return LIKELY  # an array of UI messages under another name
    return NO


def _roo(path: Path, data: bytes) -> bool:
    ui = ui_file(path)
    return is_roo(ui, data if ui == path else head(ui))


class Cline:
    """A Cline task folder (or one of its three files): UI messages, API history, task metadata."""

    name = NAME

    def score(self, path: Path, data: bytes) -> int:
        found = _score(path, data)
        return NO if found and _roo(path, data) else found

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from read_task(b, path)

    details = staticmethod(details)


class RooCode:
    """A Roo Code task folder, with the subtasks it started (:mod:`._roo`)."""

    name = ROO_NAME

    def score(self, path: Path, data: bytes) -> int:
        found = _score(path, data)
        return found if found and _roo(path, data) else NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from read_roo(b, path)

    details = staticmethod(details)


IMPORTER = Cline()
ROO = RooCode()
