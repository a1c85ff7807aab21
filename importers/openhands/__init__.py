"""Importer for OpenHands: V0 trajectories (one JSON list of actions and observations) and V1
(software-agent-sdk) conversations (a folder of ``base_state.json`` and one file per event). An
event file or ``base_state.json`` given alone loads its whole conversation. See
``docs/formats/openhands.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO
from ..records import BOM
from ._details import details
from ._v0 import V0Reader
from ._v1 import BASE_STATE, EVENT_FILE, EVENTS, V1Reader, conversation_of, event_files

NAME = "openhands"
_V0_FIRST = re.compile(rb'^\[\s*\{\s*"id"\s*:\s*-?\d+\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"source"\s*:\s*"')
_V0_KEYS = re.compile(rb'"(?:action|observation)"\s*:\s*"[a-z_]+"')
_V1_EVENT = re.compile(rb'"kind"\s*:\s*"[A-Za-z]+(?:Event|Observation|Condensation|Request)"')
_STATE_KEYS = (b'"confirmation_policy"', b'"execution_status"', b'"usage_to_metrics"')


class OpenHands:
    """OpenHands sessions, both layouts (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            has_events = (path / EVENTS).is_dir() and bool(event_files(path / EVENTS))
            return CERTAIN if (path / BASE_STATE).is_file() or has_events else NO
        start = head.removeprefix(BOM).lstrip()
        if path.name == BASE_STATE:
            return CERTAIN if any(k in start for k in _STATE_KEYS) else LIKELY
        if EVENT_FILE.fullmatch(path.name):
            in_place = path.parent.name == EVENTS
            return CERTAIN if in_place and _V1_EVENT.search(start) else (LIKELY if in_place else NO)
        if _V0_FIRST.match(start) and _V0_KEYS.search(start):
            return CERTAIN
        if start.startswith(b"[") and _V0_KEYS.search(start) and b'"source"' in start:
            return LIKELY
        return NO

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        folder = conversation_of(path)
        yield from (V0Reader(b, path) if folder is None else V1Reader(b, folder)).read()

    details = staticmethod(details)


IMPORTER = OpenHands()
