"""Where an event's raw record lives, and how to read it again on demand.

The table keeps, per event, a source number and an ``offset``/``length`` pair whose meaning the
source defines; the parsed record itself is never held. Three kinds cover every format read:

* :class:`JsonLines`: a JSON-lines file; ``offset``/``length`` is the byte span of the line.
* :class:`TextSpans`: a text file (Aider's markdown); the byte span of a block, read as text.
* :class:`JsonItems`: one JSON document (a file, or a member of a zip such as Inspect's ``.eval``);
  ``offset`` is the index of the item in the array at a JSON pointer (``/trajectory``), or -1 for
  the value at the pointer itself.
* :class:`JsonSpan`: as :class:`JsonItems`, in a JSON value that is a byte span of a file (a line
  of JSON lines holding many items, an OTLP batch; one sample of a document too big to parse whole).
* :class:`JsonItemSpans`: as :class:`JsonItems`, each item read from its own byte span of the
  document (an indented document read a piece at a time: a re-read parses one item, not the file).

Byte-addressed sources can be searched without parsing (``timeline.query.text_mask``).
"""

from __future__ import annotations

import os
import threading
import zipfile
import zlib
from array import array
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

import orjson
from walkback.journal.errors import ImporterError

BOM = b"\xef\xbb\xbf"


class Source(Protocol):
    """One place events are read from (see the module docstring)."""

    path: Path
    """The file on disk that holds the records (a zip for a zip member)."""
    byte_addressed: bool
    """``offset``/``length`` are a byte span of :attr:`path` (text search scans the bytes)."""

    def read(self, offset: int, length: int) -> Any:
        """The raw record at this address, parsed now."""
        ...

    def where(self, offset: int, line: int) -> str:
        """A person's pointer to the record: ``file:line``, ``file#/pointer/3``, ``zip!member#...``."""
        ...


class _Span:
    """Reads byte spans of one file through a descriptor kept open (``os.pread``: no seek, safe
    from several threads), so re-reading records one by one costs no open and close each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def read(self, offset: int, length: int) -> bytes:
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            return os.pread(self._fd, length, offset)
        except OSError as e:
            why = f"cannot read the record at byte {offset}: {e.strerror}"
            raise ImporterError(why, path=self.path) from None

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)


class JsonLines:
    """A JSON-lines file: one record per line, addressed by its byte span."""

    byte_addressed = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._span = _Span(path)

    def read(self, offset: int, length: int) -> Any:
        data = self._span.read(offset, length)
        if offset == 0:
            data = data.removeprefix(BOM)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            raise ImporterError(
                f"the record at byte {offset} changed since it was read", path=self.path
            ) from None

    def where(self, offset: int, line: int) -> str:
        return f"{self.path}:{line}"

    def __repr__(self) -> str:
        return f"JsonLines({str(self.path)!r})"


class TextSpans:
    """A text file whose records are byte spans (blocks of a markdown log)."""

    byte_addressed = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._span = _Span(path)

    def read(self, offset: int, length: int) -> Any:
        return {"text": self._span.read(offset, length).decode("utf-8", errors="replace")}

    def where(self, offset: int, line: int) -> str:
        return f"{self.path}:{line}"

    def __repr__(self) -> str:
        return f"TextSpans({str(self.path)!r})"


class JsonItems:
    """The items of one array inside a JSON document, by index (or the value at the pointer)."""

    byte_addressed = False

    def __init__(self, path: Path, pointer: str = "", *, member: str | None = None) -> None:
        self.path = path
        self.pointer = pointer
        """RFC 6901 JSON pointer of the array (``""``: the document itself)."""
        self.member = member
        """The zip member holding the document, if :attr:`path` is a zip."""

    def read(self, offset: int, length: int) -> Any:
        return _item(_document(self.path, self.member), self.pointer, offset, self.path)

    def where(self, offset: int, line: int) -> str:
        member = f"!{self.member}" if self.member else ""
        item = f"/{offset}" if offset >= 0 else ""
        return f"{self.path}{member}#{self.pointer}{item}"

    def __repr__(self) -> str:
        return f"JsonItems({str(self.path)!r}, {self.pointer!r}, member={self.member!r})"


class JsonSpan:
    """The items of one array inside a JSON value that is a byte span of a file, by index: a line
    of a JSON-lines file whose record holds many items (an OTLP batch of spans), or one part of a
    document too big to parse whole (a sample of an Inspect ``.json`` log)."""

    byte_addressed = False

    def __init__(
        self, path: Path, start: int, length: int, pointer: str = "", *, line: int = 0, base: str = ""
    ) -> None:
        self.path = path
        self.start = start
        self.length = length
        """The value's byte span in :attr:`path`."""
        self.pointer = pointer
        """RFC 6901 JSON pointer of the array inside the value."""
        self.line = line
        """The span's 1-based line when it is a line of JSON lines (0: it is not)."""
        self.base = base
        """The pointer of the value in its whole document (``/samples/3``), for :meth:`where`."""

    def read(self, offset: int, length: int) -> Any:
        return _item(_document(self.path, None, (self.start, self.length)), self.pointer, offset, self.path)

    def where(self, offset: int, line: int) -> str:
        at = f":{self.line}" if self.line else ""
        item = f"/{offset}" if offset >= 0 else ""
        return f"{self.path}{at}#{self.base}{self.pointer}{item}"

    def __repr__(self) -> str:
        return f"JsonSpan({str(self.path)!r}, {self.start}, {self.length}, {self.pointer!r})"


class JsonItemSpans(JsonItems):
    """As :class:`JsonItems` (``offset`` = the item's index, -1 = the value at the pointer, the
    same :meth:`where`), with every item's byte span in the document kept as it was read, so reading
    an item again parses that item only. The reader fills the spans (:meth:`add`)."""

    def __init__(self, path: Path, pointer: str = "") -> None:
        super().__init__(path, pointer)
        self.starts = array("q")
        self.lengths = array("q")
        self.value: tuple[int, int] | None = None
        """The byte span of the value at the pointer itself, when known."""
        self._span = _Span(path)

    def add(self, start: int, length: int) -> int:
        """Record the next item's span; returns its index."""
        self.starts.append(start)
        self.lengths.append(length)
        return len(self.starts) - 1

    def read(self, offset: int, length: int) -> Any:
        span = self.value if offset < 0 else None
        if 0 <= offset < len(self.starts):
            span = (self.starts[offset], self.lengths[offset])
        if span is None:
            raise ImporterError(f"no item {offset} at {self.pointer or '/'}", path=self.path)
        try:
            return orjson.loads(self._span.read(*span))
        except orjson.JSONDecodeError:
            raise ImporterError(
                f"the item at byte {span[0]} changed since it was read", path=self.path
            ) from None

    def __repr__(self) -> str:
        return f"JsonItemSpans({str(self.path)!r}, {self.pointer!r}, items={len(self.starts)})"


def _item(doc: Any, pointer: str, offset: int, path: Path) -> Any:
    """Item ``offset`` of the array at ``pointer`` in ``doc`` (-1: the value at the pointer)."""
    value = resolve(doc, pointer)
    if offset < 0:
        return value
    if not isinstance(value, list) or offset >= len(value):
        raise ImporterError(f"no item {offset} at {pointer or '/'} any more", path=path)
    return value[offset]


def resolve(doc: Any, pointer: str) -> Any:
    """The value at an RFC 6901 ``pointer`` in ``doc``."""
    value = doc
    for part in pointer.split("/")[1:] if pointer else ():
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            raise ImporterError(f"nothing at {pointer} any more")
    return value


_cache_lock = threading.Lock()
_cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
"""The last documents parsed for raw reads, newest last: re-reading one item must not re-parse its
document every time, and a session reading two documents in turn (Cline's UI messages and API
history) must not evict one with the other."""
DOCUMENTS_KEPT = 4


def _document(path: Path, member: str | None, span: tuple[int, int] | None = None) -> Any:
    try:
        st = path.stat()
    except OSError as e:
        raise ImporterError(f"cannot read: {e.strerror}", path=path) from None
    key = (str(path), member, span, st.st_size, st.st_mtime_ns)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    try:
        if span is not None:
            with open(path, "rb") as f:
                f.seek(span[0])
                data = f.read(span[1])
        elif member is None:
            data = path.read_bytes()
        else:
            with zipfile.ZipFile(path) as z:
                data = z.read(member)
        doc = orjson.loads(data.removeprefix(BOM))
    except (OSError, KeyError, EOFError, RuntimeError, NotImplementedError, zlib.error, zipfile.BadZipFile,
            orjson.JSONDecodeError) as e:
        raise ImporterError(f"cannot read the document again: {e}", path=path) from None
    with _cache_lock:
        _cache[key] = doc
        while len(_cache) > DOCUMENTS_KEPT:
            _cache.popitem(last=False)
    return doc
