"""OTLP/JSON files as batches of spans or log records, each batch with the source that re-reads it.

Layouts read: an ``ExportTraceServiceRequest`` (``resourceSpans`` > ``scopeSpans`` > ``spans``),
the older one Tempo and Jaeger exports still use (``batches`` > ``instrumentationLibrarySpans``),
logs (``resourceLogs`` > ``scopeLogs`` > ``logRecords``), one such document per file or one per
line (the collector's file exporter), and a folder of such files.

A document (indented or not) is never parsed whole: its spans are found by their bytes and parsed
one at a time, each re-read from its own span (:class:`~walkback.importers.documents.Skeleton`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.sources import JsonSpan, Source

from ..base import HEAD_BYTES
from ..documents import Skeleton
from ..fields import mapping
from ..records import first_record, lines
from ._attrs import attributes

HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(resourceSpans|resourceLogs|batches)"\s*:\s*\[')
"""The first key of an OTLP/JSON export (every exporter writes it first)."""
LAYOUTS = (
    ("resourceSpans", ("scopeSpans", "instrumentationLibrarySpans"), "spans"),
    ("batches", ("scopeSpans", "instrumentationLibrarySpans"), "spans"),
    ("resourceLogs", ("scopeLogs", "instrumentationLibraryLogs"), "logRecords"),
)
ARRAYS = tuple(f"/{top}/*/{key}/*/{items}" for top, scopes, items in LAYOUTS for key in scopes)
"""Where the spans and log records of a document are (``*``: any item of an array)."""
SUFFIXES = (".json", ".jsonl", ".ndjson", ".otlp")
Records = Callable[[str, list[Any]], tuple[Source, Iterable[Any]]]
"""The source of the array at a pointer, and its records, given that array as parsed."""


@dataclass
class Batch:
    """The spans (or log records) of one scope of one resource."""

    records: Iterable[Any]
    """Parsed records, or :class:`~walkback.importers.documents.Damaged` ones; read once."""
    logs: bool
    """Log records rather than spans."""
    resource: dict[str, Any]
    """The resource's attributes (``service.name`` ...)."""
    scope: str
    source: Source
    """Reads record ``k`` of :attr:`records` again (``offset`` = ``k``)."""


def is_otlp(head: bytes) -> bool:
    return HEAD.match(head) is not None


def otlp_files(folder: Path) -> list[Path]:
    """The OTLP files directly in ``folder`` when every JSON file there is one (else none)."""
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SUFFIXES)
    except OSError:
        return []
    found = []
    for p in files:
        try:
            with open(p, "rb") as f:
                head = f.read(HEAD_BYTES)
        except OSError:
            return []
        if not is_otlp(head):
            return []
        found.append(p)
    return found


def batches(path: Path, b: SessionBuilder) -> Iterator[Batch]:
    """Every batch of ``path`` (a file or a folder of files), in file order."""
    for p in otlp_files(path) if path.is_dir() else [path]:
        yield from _file(p, b)


def _file(path: Path, b: SessionBuilder) -> Iterator[Batch]:
    if first_record(path, -1) is None:  # one (indented) document
        yield from _one_document(path, b)
        return
    for offset, line_no, raw in lines(path):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            b.placeholder(
                src=b.source(JsonSpan(path, offset, len(raw), line=line_no)),
                line=line_no,
                offset=offset,
                length=len(raw),
                reason=f"not JSON: {e}",
                text=raw[:200].decode("utf-8", "replace"),
            )
            continue
        yield from _document(doc, _in_line(path, offset, len(raw), line_no), path, b, line=line_no)


def _one_document(path: Path, b: SessionBuilder) -> Iterator[Batch]:
    with Skeleton(path, ARRAYS) as doc:
        yield from _document(doc.parsed("OTLP/JSON"), doc.array, path, b)


def _in_line(path: Path, offset: int, length: int, line: int) -> Records:
    return lambda pointer, records: (JsonSpan(path, offset, length, pointer, line=line), records)


def _document(doc: Any, read: Records, path: Path, b: SessionBuilder, line: int = 0) -> Iterator[Batch]:
    if not isinstance(doc, dict):
        b.skip(path, line, f"a JSON {type(doc).__name__}, not an OTLP export")
        return
    for top, scopes, items in LAYOUTS:
        resources = doc.get(top)
        if not isinstance(resources, list):
            continue
        for i, res in enumerate(resources):
            res = mapping(res)
            resource = attributes(mapping(res.get("resource")).get("attributes"))
            for key in scopes:
                groups = res.get(key)
                if not isinstance(groups, list):
                    continue
                for j, group in enumerate(groups):
                    group = mapping(group)
                    records = group.get(items)
                    if not isinstance(records, list) or not records:
                        continue
                    scope = mapping(group.get("scope") or group.get("instrumentationLibrary"))
                    source, parsed = read(f"/{top}/{i}/{key}/{j}/{items}", records)
                    yield Batch(parsed, items == "logRecords", resource, str(scope.get("name") or ""), source)
