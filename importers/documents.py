"""One JSON document read a piece at a time: the document importers share it (Copilot's legacy
session, OpenHands V0, SWE-agent and mini-swe-agent trajectories).

These tools write their documents indented (``json.dump(indent=N)``, ``JSON.stringify(v, null,
N)``), and JSON strings hold no raw newline, so a line indented by exactly ``N`` spaces is a key of
the root object (or an item of a root array), and one indented by ``2N`` an item of an array at a
root key: a scan for those lines finds every item's byte span without parsing, and each item is
parsed alone. A 100 MB trajectory is never in memory whole, and an item is read again from its span
(:class:`~walkback.timeline.sources.JsonItemSpans`). A damaged item is a :class:`Damaged` value (a
placeholder row for the importer); a document cut inside an array ends with one.

A document that is not laid out so (compact, tabs, a layout the scan does not follow) is parsed
whole, as :func:`~walkback.importers.base.load_document` does, behind the same interface.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.sources import JsonItems, JsonItemSpans

from .records import BOM, load_document

BLOCK = 1 << 22
"""Bytes read at a time while scanning."""
MISSING: Any = object()
"""What :meth:`Document.get` returns for a key the document does not have."""
_KEY = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:\s*')
_OPENERS = (b"{", b"[")


@dataclass(frozen=True)
class Damaged:
    """An item or value that could not be read: why, where it starts, what it began with."""

    reason: str
    line: int
    text: str
    torn: bool = False
    """The document ends inside it (a torn write), rather than damage inside the document."""


@dataclass
class _Value:
    """A root key's value: its byte span, and for a container written over lines, the span of its
    lines (``body``: from the end of its first line to the start of its closing one)."""

    start: int
    end: int
    line: int
    body: tuple[int, int] | None = None
    closed: bool = True


class _Layout(Exception):
    """The document is not laid out as the scan expects: read it whole."""


def pointer(key: str) -> str:
    """The RFC 6901 pointer of a root key."""
    return "/" + key.replace("~", "~0").replace("/", "~1")


class _Lines:
    """The lines of a byte range of a file indented by exactly ``indent`` spaces, a block at a
    time: ``(offset of the text after the indent, line number, end of the line, the text)``. The
    range starts at the newline that ends line ``line``."""

    def __init__(self, fd: int, start: int, end: int, line: int, indent: int) -> None:
        self.fd, self.start, self.end, self.line = fd, start, end, line
        self.pattern = re.compile(rb"\n" + b" " * indent + rb"(?=[^ \r\n])")
        self.indent = indent

    def __iter__(self) -> Iterator[tuple[int, int, int, bytes]]:
        pos = base = self.start
        before = self.line - 1
        # before: the newlines in the file before data[0]
        data = b""
        skip = self.indent + 1
        while True:
            if pos < self.end:
                block = os.pread(self.fd, min(BLOCK, self.end - pos), pos)
                pos = pos + len(block) if block else self.end
                data += block
            final = pos >= self.end
            last = len(data) if final else data.rfind(b"\n")
            if last <= 0 and not final:
                continue
            at = seen = 0
            for m in self.pattern.finditer(data, 0, last):
                p = m.start()
                seen += data.count(b"\n", at, p)
                at = p
                stop = data.find(b"\n", p + 1)
                stop = len(data) if stop < 0 else stop
                yield base + p + skip, before + seen + 2, base + stop, data[p + skip : stop].rstrip(b"\r")
            if final:
                return
            before += data.count(b"\n", 0, last)
            base += last
            data = data[last:]


class Document:
    """A JSON document read as its layout allows (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.whole: Any = MISSING
        """The parsed document, when it is read whole."""
        self.keys: dict[str, _Value] = {}
        self.array = False
        """The root is an array (its items are at the first indentation)."""
        self.indent = 0
        self.size = 0
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise ImporterError(f"cannot read: {e.strerror}", path=path) from None
        try:
            self._index()
        except _Layout:
            self.keys, self.array = {}, False
            self.whole = load_document(path)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Document:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def streamed(self) -> bool:
        return self.whole is MISSING

    def _read(self, start: int, length: int) -> bytes:
        return os.pread(self.fd, length, start)

    # -- the layout ------------------------------------------------------------------------------
    def _index(self) -> None:
        self.size = os.fstat(self.fd).st_size
        head = self._read(0, 4096)
        skip = 3 if head.startswith(BOM) else 0
        first = head.find(b"\n", skip)
        opener = head[skip:first].strip() if first >= 0 else b""
        second = head[first + 1 :].split(b"\n", 1)[0] if first >= 0 else b""
        self.indent = len(second) - len(second.lstrip(b" "))
        if opener not in _OPENERS or not self.indent or second[self.indent : self.indent + 1] in (b"", b"\t"):
            raise _Layout
        self.array = opener == b"["
        if self.array:
            return
        open_key: str | None = None
        for offset, line, stop, text in _Lines(self.fd, first, self.size, 1, self.indent):
            if text[:1] in (b"}", b"]"):
                if open_key is None:
                    raise _Layout
                value = self.keys[open_key]
                value.end, value.closed = offset + 1, True
                value.body = (value.body[0] if value.body else offset, offset - self.indent - 1)
                open_key = None
                continue
            m = _KEY.match(text)
            if m is None or open_key is not None:
                raise _Layout
            try:
                key = orjson.loads(b'"' + m.group(1) + b'"')
            except orjson.JSONDecodeError:
                raise _Layout from None
            rest = text[m.end() :].rstrip(b", \t")
            start = offset + m.end()
            if rest in _OPENERS:
                self.keys[key] = _Value(start, self.size, line, body=(stop, self.size), closed=False)
                open_key = key
            else:
                self.keys[key] = _Value(start, start + len(rest), line)

    # -- values and items ------------------------------------------------------------------------
    def get(self, key: str) -> Any:
        """The parsed value of a root key: :data:`MISSING` when absent, :class:`Damaged` when it
        cannot be read."""
        if not self.streamed:
            return self.whole.get(key, MISSING) if isinstance(self.whole, dict) else MISSING
        value = self.keys.get(key)
        if value is None:
            return MISSING
        if not value.closed:
            return Damaged(f"the document ends inside {pointer(key)}", value.line, "", torn=True)
        data = self._read(value.start, value.end - value.start)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as e:
            return Damaged(
                f"{pointer(key)} is not JSON: {e}", value.line, data[:200].decode("utf-8", "replace")
            )

    def names(self) -> list[str]:
        """The root object's keys, in the document's order (empty for any other root)."""
        if self.streamed:
            return list(self.keys)
        return list(self.whole) if isinstance(self.whole, dict) else []

    def is_object(self) -> bool:
        return not self.array if self.streamed else isinstance(self.whole, dict)

    def is_array(self, key: str | None) -> bool:
        """The root (``None``) or a root key holds an array."""
        if not self.streamed:
            value = self.whole if key is None else self.get(key)
            return isinstance(value, list)
        if key is None:
            return self.array
        value = self.keys.get(key)
        return value is not None and self._read(value.start, 1) == b"["

    def source(self, key: str | None) -> JsonItems:
        """Where the root's (``None``) or a root key's value and items are read again."""
        at = "" if key is None else pointer(key)
        value = self.keys.get(key) if key is not None else None
        if not self.streamed or (key is not None and (value is None or value.body is None)):
            return JsonItems(self.path, at)
        spans = JsonItemSpans(self.path, at)
        if value is not None and value.closed:
            spans.value = (value.start, value.end - value.start)
        return spans

    def items(self, key: str | None, source: JsonItems) -> Iterator[tuple[int, Any]]:
        """``(index, item)`` of the array at the root (``None``) or a root key, each item's span
        recorded in ``source`` (from :meth:`source`); a damaged item is a :class:`Damaged`."""
        if not isinstance(source, JsonItemSpans):
            value = self.get(key) if key is not None else self.whole
            yield from enumerate(value if isinstance(value, list) else ())
            return
        if key is None:
            first = self._read(0, 4096).find(b"\n")
            tail = self._read(max(self.size - 64, 0), 64).rstrip()
            start, end, line, depth, closed = first, self.size, 1, self.indent, tail.endswith(b"]")
        else:
            value_ = self.keys[key]
            assert value_.body is not None
            (start, end), line, depth, closed = value_.body, value_.line, 2 * self.indent, value_.closed
        yield from self._scan(source, start, end, line, depth, closed)

    def _scan(
        self, source: JsonItemSpans, start: int, end: int, line: int, depth: int, closed: bool
    ) -> Iterator[tuple[int, Any]]:
        opened: tuple[int, int] | None = None
        torn = False
        for offset, at, stop, text in _Lines(self.fd, start, end, line, depth):
            if text[:1] in (b"}", b"]") and opened is not None:
                yield self._item(source, opened[0], offset + 1, opened[1])
                opened = None
            elif text.rstrip(b", \t") in _OPENERS:
                if opened is not None:
                    yield self._item(source, opened[0], offset - depth - 1, opened[1])
                opened = (offset, at)
            elif opened is None:
                torn = not closed and stop >= end  # the last line, cut short
                yield self._item(source, offset, offset + len(text.rstrip(b", \t")), at, cut=torn)
        if opened is not None:
            yield self._item(source, opened[0], end, opened[1], cut=True)
        elif not closed and not torn:
            k = source.add(end, 0)
            yield k, Damaged("the document ends here: it was cut (a torn write)", 0, "", torn=True)

    def _item(
        self, source: JsonItemSpans, start: int, end: int, line: int, *, cut: bool = False
    ) -> tuple[int, Any]:
        k = source.add(start, end - start)
        data = self._read(start, end - start)
        try:
            return k, orjson.loads(data)
        except orjson.JSONDecodeError as e:
            why = "cut: the document ends inside it" if cut else f"not JSON: {e}"
            return k, Damaged(f"line {line}: {why}", line, data[:200].decode("utf-8", "replace"), torn=cut)


def placeholder(b: SessionBuilder, src: int, k: int, item: Any, what: str) -> None:
    """The row for item ``k`` of a document that cannot be read: a :class:`Damaged` one with its
    reason and line, any other with ``what`` it is instead of an object."""
    if isinstance(item, Damaged):
        status = "torn" if item.torn else "corrupt"
        b.placeholder(
            src=src, line=item.line, offset=k, length=0, reason=item.reason, status=status, text=item.text
        )
    else:
        b.placeholder(src=src, line=0, offset=k, length=0, reason=what, text=str(item)[:200])
