"""Importer for OpenTelemetry traces following the GenAI semantic conventions (OTLP/JSON).

A file holds one export (``resourceSpans``, the older ``batches`` layout, or ``resourceLogs``) or
one per line; a folder of such files (many services) is one session, joined by trace id. Several
traces read together are one session with a lane per agent of each; ``PATH#<trace id>`` reads
one. See ``docs/formats/otel.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.timeline.builder import SessionBuilder

from ..base import CERTAIN, LIKELY, NO
from ._details import details
from ._files import HEAD, otlp_files
from ._read import collect, read_traces, traces

NAME = "otel"


class Otel:
    """OTLP/JSON traces and logs (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head: bytes) -> int:
        if path.is_dir():
            return LIKELY if otlp_files(path) else NO
        m = HEAD.match(head)
        if m is None:
            return NO
        if m.group(1) != b"batches":
            return CERTAIN
        return CERTAIN if b'"instrumentationLibrarySpans"' in head or b'"scopeSpans"' in head else LIKELY

    def parts(self, path: Path) -> list[str]:
        found = traces(collect(path, SessionBuilder(NAME, describe=details)))
        return found if len(found) > 1 else []

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        yield from read_traces(path, b, part)

    details = staticmethod(details)


IMPORTER = Otel()
