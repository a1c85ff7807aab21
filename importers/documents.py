"""One JSON document read a piece at a time: the document importers share it (Copilot's legacy
session, OpenHands V0, SWE-agent and mini-swe-agent trajectories, Cline's task files, OTLP exports).

These tools write their documents indented (``json.dump(indent=N)``, ``JSON.stringify(v, null,
N)``), and JSON strings hold no raw newline, so a line indented by exactly ``N`` spaces is a key of
the root object (or an item of a root array), and one indented by ``2N`` an item of an array at a
root key: a scan for those lines finds every item's byte span without parsing, and each item is
parsed alone. A 100 MB trajectory is never in memory whole, and an item is read again from its span
(:class:`~walkback.timeline.sources.JsonItemSpans`). A damaged item is a :class:`Damaged` value (a
placeholder row for the importer); a document cut inside an array ends with one.

A document that is not laid out so (compact, tabs, a layout the scan does not follow) is parsed
whole, as :func:`~walkback.importers.base.load_document` does, behind the same interface.

:class:`Skeleton` follows any layout, for the items of the arrays at some paths (an OTLP export's
spans, at ``/resourceSpans/*/scopeSpans/*/spans``; a Cline message file's, at the root ``""``): it
finds them by the document's brackets, a whole item per regex match (C, not a Python step per
bracket), and leaves the rest, small, to be parsed whole, so a damaged document is still found out.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

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
ENDS_HERE = "the document ends here: it was cut (a torn write)"
_STRING = rb'"(?:[^"\\]++|\\.)*+"'
FILL = re.compile(rb'(?:[^"\[\]{}]++|(' + _STRING + rb"))*+")
"""Everything up to the next bracket outside a string, strings matched whole (group 1: the last);
what every bracket scanner of a JSON document steps over (with :func:`past`)."""
_COLON = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*")
_GAP = re.compile(rb"[ \t\r\n,]*+")
_SCALAR = re.compile(_STRING + rb'|[^ \t\r\n,\[\]{"]++')
"""An item that is not a container: a string, or anything up to the next separator."""
NESTED = 16
"""How deep a container's own containers :data:`_VALUE` matches whole."""


def _inside(depth: int) -> bytes:
    nested = rb"|[\[{]" + _inside(depth - 1) + rb"[\]}]" if depth else b""
    return rb'(?:[^"\[\]{}]++|' + _STRING + nested + rb")*+"


_VALUE = re.compile(rb"[\[{]" + _inside(NESTED) + rb"[\]}]")
"""A container nested at most :data:`NESTED` deep, matched whole."""


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


class _Opened:
    """A file held open for ``pread`` until :meth:`close` (or the end of a ``with`` block)."""

    fd = -1

    def _open(self, path: Path) -> None:
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise ImporterError(f"cannot read: {e.strerror}", path=path) from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Document(_Opened):
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
        self._open(path)
        try:
            self._index()
        except _Layout:
            self.keys, self.array = {}, False
            self.whole = load_document(path)

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
            yield k, Damaged(ENDS_HERE, 0, "", torn=True)

    def _item(
        self, source: JsonItemSpans, start: int, end: int, line: int, *, cut: bool = False
    ) -> tuple[int, Any]:
        k = source.add(start, end - start)
        return k, _parsed(self._read(start, end - start), line, cut)


def _parsed(data: bytes, line: int, cut: bool) -> Any:
    """An item's value, or a :class:`Damaged` saying why it has none (``cut``: the document ends
    inside it)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        why = "cut: the document ends inside it" if cut else f"not JSON: {e}"
        return Damaged(f"line {line}: {why}", line, data[:200].decode("utf-8", "replace"), torn=cut)


class Skeleton(_Opened):
    """A JSON document, any layout, with the items of the arrays at some ``paths`` cut out by its
    brackets (``/resourceSpans/*/scopeSpans/*/spans``: ``*`` is any item of an array).

    :attr:`text` is the document with each such item replaced by its number: parsing it checks
    everything but the items, and :meth:`array` reads the items whose numbers an array of it holds,
    each parsed alone. A document cut inside such an array is closed where it ends, its last item
    torn.
    """

    def __init__(self, path: Path, paths: Collection[str]) -> None:
        self.path = path
        self.starts, self.lengths, self.lines = array("q"), array("q"), array("q")
        """Each item's byte span in the file and its line."""
        self.torn = -1
        """The item the document ends in (-1: none)."""
        self._open(path)
        try:
            self.text = _Scan(self, paths).run()
        except OSError as e:
            self.close()
            raise ImporterError(f"cannot read: {e.strerror}", path=path) from None

    def parsed(self, what: str) -> Any:
        """:attr:`text` parsed. A document that is not JSON is an :class:`ImporterError` saying
        where parsing the whole file stops (the text's lines are not the file's): "not ``what``"."""
        try:
            return orjson.loads(self.text)
        except orjson.JSONDecodeError as e:
            try:
                orjson.loads(self.path.read_bytes().removeprefix(BOM))
            except orjson.JSONDecodeError as whole:
                raise ImporterError(f"not {what}: {whole.msg}", path=self.path, line=whole.lineno) from None
            except OSError as err:
                raise ImporterError(f"cannot read: {err.strerror}", path=self.path) from None
            raise ImporterError(f"not {what}: {e.msg}", path=self.path) from None

    def add(self, start: int, length: int, line: int) -> int:
        """Record the next item; returns its number."""
        self.starts.append(start)
        self.lengths.append(length)
        self.lines.append(line)
        return len(self.starts) - 1

    def array(self, pointer: str, numbers: list[Any]) -> tuple[JsonItemSpans, Iterator[Any]]:
        """The source of the array at ``pointer`` of :attr:`text`, holding the items ``numbers``,
        and those items, parsed as they are iterated (each one's span then recorded in the source);
        a damaged one is a :class:`Damaged`."""
        source = JsonItemSpans(self.path, pointer)
        return source, self._items(numbers, source)

    def _items(self, numbers: list[int], source: JsonItemSpans) -> Iterator[Any]:
        """The items, read a block at a time (items in file order lie one after the other: a
        ``pread`` each would be a system call per item)."""
        block, at = b"", 0  # the file's bytes from offset ``at``
        for n in numbers:
            start, length, line = self.starts[n], self.lengths[n], self.lines[n]
            source.add(start, length)
            if not length:
                yield Damaged(ENDS_HERE, line, "", torn=True)
                continue
            if not at <= start <= start + length <= at + len(block):
                block, at = os.pread(self.fd, max(BLOCK, length), start), start
            yield _parsed(block[start - at : start - at + length], line, n == self.torn)


class _Scan:
    """One pass over a :class:`Skeleton`'s file, a block at a time: its :attr:`~Skeleton.text`."""

    def __init__(self, out: Skeleton, paths: Collection[str]) -> None:
        self.out = out
        self.cut = frozenset(paths)
        self.within = {p[:i] for p in paths for i, c in enumerate(p) if c == "/"}
        """The paths of the containers on the way to them (``""``: the root)."""
        self.buf = bytearray()
        self.base = 0
        """The file offset of ``buf[0]``."""
        self.text = bytearray()
        self.copied = 0
        """``buf[:copied]`` is in :attr:`text` (or an item cut out)."""
        self.line = 1
        self.counted = 0
        """``line`` is the line of ``buf[counted]``."""

    def _more(self) -> bool:
        block = os.pread(self.out.fd, BLOCK, self.base + len(self.buf))
        self.buf += block
        return bool(block)

    def _drop(self, pos: int) -> int:
        """Forget the buffer before ``pos`` once that is a block; returns ``pos``'s new place."""
        if pos < BLOCK:
            return pos
        buf = self.buf
        self.text += buf[self.copied : pos]
        self.line += buf.count(b"\n", self.counted, pos)
        del buf[:pos]
        self.base += pos
        self.copied = self.counted = 0
        return 0

    def _item(self, start: int, end: int) -> int:
        """Cut out ``buf[start:end]``, an item; returns its number."""
        self.line += self.buf.count(b"\n", self.counted, start)
        self.counted = start
        n = self.out.add(self.base + start, end - start, self.line)
        self.text += self.buf[self.copied : start]
        self.text += b" %d" % n  # apart: two items may touch
        self.copied = end
        return n

    def _end(self, pos: int) -> int:
        """Where the value at ``pos`` ends (-1: the document ends inside it)."""
        buf = self.buf
        if buf[pos] in b"[{":
            m = _VALUE.match(buf, pos)
            return m.end() if m is not None else self._walk(pos)
        while (m := _SCALAR.match(buf, pos)) is None or m.end() == len(buf):
            if not self._more():
                return -1 if m is None else m.end()
        return m.end()

    def _walk(self, pos: int) -> int:
        """As :meth:`_end`, a bracket at a time: for a container nested deeper than :data:`_VALUE`
        follows, or not read whole yet."""
        buf = self.buf
        depth = 0
        while True:
            pos = past(FILL, buf, pos)
            if pos == len(buf) or buf[pos] == 0x22:  # the end of what is read, or a string cut there
                if not self._more():
                    return -1
                continue
            depth += 1 if buf[pos] in b"[{" else -1
            pos += 1
            if depth == 0:
                return pos

    def _path(self, stack: list[tuple[str, bool, bool]], m: re.Match[bytes], at: int) -> str | None:
        """The path of the container opening at ``at`` (``m``: the fill before it); None after a
        key that is not one."""
        if not stack:
            return ""
        path, is_array, _ = stack[-1]
        if is_array:
            return path + "/*"
        if m.group(1) is None or _COLON.fullmatch(self.buf, m.end(1), at) is None:
            return None
        try:
            return path + pointer(orjson.loads(m.group(1)))
        except orjson.JSONDecodeError:
            return None

    def run(self) -> bytearray:
        buf = self.buf
        self._more()
        pos = self.copied = self.counted = 3 if buf.startswith(BOM) else 0
        stack: list[tuple[str, bool, bool]] = []  # the containers it is in: path, an array, cut items
        while True:
            if stack and stack[-1][2]:  # between the items of an array
                pos = past(_GAP, buf, pos)
                if pos == len(buf):
                    if self._more():
                        continue
                    break
                if buf[pos] == 0x5D:  # "]"
                    stack.pop()
                    pos += 1
                    continue
                end = self._end(pos)
                if end < 0:
                    self.out.torn = self._item(pos, len(buf))
                    break
                self._item(pos, end)
                pos = self._drop(end)
                continue
            m = FILL.match(buf, pos)
            assert m is not None  # it matches nothing at least
            at = m.end()
            if at == len(buf) or buf[at] == 0x22:  # the end of what is read, or a string cut there
                if self._more():
                    continue
                break
            if buf[at] in b"]}":
                if stack:
                    stack.pop()
                pos = at + 1
                continue
            path = self._path(stack, m, at)
            if path is not None and (path in self.cut or path in self.within):
                is_array = buf[at] == 0x5B
                stack.append((path, is_array, is_array and path in self.cut))
                pos = at + 1
            else:  # a value on no path: it stays in the text
                pos = self._end(at)
                if pos < 0:
                    break
            pos = self._drop(pos)
        text = self.text
        text += buf[self.copied :]
        if not stack or not stack[-1][2]:
            return text  # whole, or cut elsewhere: parsing it says where
        if self.out.torn < 0:  # cut between items: a torn item of no bytes says where
            self.line += buf.count(b"\n", self.counted)
            n = self.out.torn = self.out.add(self.base + len(buf), 0, self.line)
            text += (b"" if text.rstrip().endswith((b"[", b",")) else b",") + b" %d" % n
        text += b"".join(b"]" if is_array else b"}" for _, is_array, _ in reversed(stack))
        return text


def past(pattern: re.Pattern[bytes], buf: bytearray, pos: int) -> int:
    """The end of ``pattern`` (one that matches nothing too) at ``pos``."""
    m = pattern.match(buf, pos)
    return m.end() if m is not None else pos


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
