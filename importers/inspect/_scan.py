"""The samples of an Inspect ``.json`` log as byte spans, found without parsing the whole log.

A ``.json`` log is one document: ``{"version": 2, "status": ..., "eval": {...}, ..., "samples":
[{...}, ...], "reductions": [...]}``; a 1 GB log must not be parsed whole, so the samples are
found by their bytes and parsed one at a time. Inspect writes the log with two-space indentation,
where a sample's closing brace is the one line that is four spaces and ``}`` (JSON strings never
hold a raw newline): finding it is a byte search. Any other layout takes the general scanner, which
tracks brackets outside strings (slower, same answer).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..documents import FILL, past

BLOCK = 1 << 22
_PRETTY_KEY = b'\n  "samples": ['
_PRETTY_END = b"\n    }"
_SAMPLES_KEY = re.compile(rb'"samples"\s*:\s*\Z')
_SPACE = b" \t\r\n"


@dataclass(frozen=True)
class Span:
    """One sample's bytes and where they are in the file."""

    start: int
    data: bytes
    torn: bool = False
    """The document ends inside this sample (a copy cut short)."""


class SampleScan:
    """Iterate the samples of a ``.json`` log; :attr:`header` is the log without them, as JSON
    bytes, once the ``samples`` key has been passed (``b""`` if the log has none)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.header = b""
        self.buf = bytearray()
        self.base = 0
        """File offset of ``buf[0]``."""
        self.eof = False

    def _more(self) -> bool:
        block = self.f.read(BLOCK)
        if not block:
            self.eof = True
            return False
        self.buf += block
        return True

    def _drop(self, upto: int) -> int:
        """Forget the buffer's bytes before ``upto``; returns the new position of ``upto``."""
        if upto > BLOCK:
            del self.buf[:upto]
            self.base += upto
            return 0
        return upto

    def __iter__(self) -> Iterator[Span]:
        while len(self.buf) < len(_PRETTY_KEY) + 16 and self._more():
            pass
        start = len(self.buf) - len(self.buf.lstrip(b"\xef\xbb\xbf" + _SPACE))
        if self.buf[start : start + 5] == b'{\n  "':
            yield from self._pretty()
        else:
            yield from self._general()

    def _pretty(self) -> Iterator[Span]:
        buf = self.buf
        at = 0
        while (key := buf.find(_PRETTY_KEY, at)) < 0:
            at = max(0, len(buf) - len(_PRETTY_KEY))
            if not self._more():
                return
        opening = key + len(_PRETTY_KEY) - 1
        self.header = bytes(buf[:opening]) + b"[]}"
        pos = opening + 1
        while True:
            while pos >= len(buf) and self._more():
                pass
            if pos >= len(buf):
                return
            c = buf[pos]
            if c in _SPACE or c == 0x2C:  # whitespace, ","
                pos += 1
                continue
            if c != 0x7B:  # "{": anything else ends the samples ("]", or damage)
                return
            at = pos
            while (end := buf.find(_PRETTY_END, at)) < 0:
                at = max(pos, len(buf) - len(_PRETTY_END))
                if not self._more():
                    yield Span(self.base + pos, bytes(buf[pos:]), torn=True)
                    return
            end += len(_PRETTY_END)
            yield Span(self.base + pos, bytes(buf[pos:end]))
            pos = self._drop(end)

    def _general(self) -> Iterator[Span]:
        """Any layout: brackets outside strings, counted (the samples are the objects at depth 3)."""
        buf = self.buf
        depth = 0
        pos = 0
        fill_from = 0
        samples = False
        first = -1
        while True:
            pos = past(FILL, buf, pos)
            if pos >= len(buf) or buf[pos] == 0x22:  # the end of what is read, or a string cut there
                if not self._more():
                    if samples and first >= 0:
                        yield Span(self.base + first, bytes(buf[first:]), torn=True)
                    return
                continue
            c = buf[pos]
            if c == 0x5B or c == 0x7B:  # "[", "{"
                if depth == 1 and c == 0x5B and not samples and _SAMPLES_KEY.search(buf, fill_from, pos):
                    samples = True
                    self.header = bytes(buf[:pos]) + b"[]}"
                elif samples and depth == 2 and c == 0x7B:
                    first = pos
                depth += 1
            else:
                depth -= 1
                if samples and depth == 2 and c == 0x7D and first >= 0:
                    yield Span(self.base + first, bytes(buf[first : pos + 1]))
                    first = -1
                    pos = self._drop(pos) if self.header else pos
                elif samples and depth <= 1:
                    return
                if depth < 0:
                    return
            pos += 1
            fill_from = pos
