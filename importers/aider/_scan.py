"""Cutting an Aider chat history into records, a block of the file at a time.

Aider writes four things into ``.aider.chat.history.md`` (``aider/io.py``), and each has a shape the
scanner keys on:

* a run header, ``# aider chat started at 2024-08-05 19:33:02``;
* user input, every line ``#### <text>`` ending in two spaces (a markdown line break);
* tool output, ``> <text>`` ending in two spaces; a multi-line message from ``tool_output`` has the
  ``> `` on its first line only and runs to the first line with text that ends in two spaces;
* the assistant's reply, plain text between blank lines. Inside a reply a ``> `` or ``#### ``
  line is the model's markdown unless it ends in two spaces, as only Aider's own lines do.

Only line starts with ``#`` or ``>`` are looked at one by one (found by a regex over the block);
the lines between them are skipped in C. A record is ``(kind, start, end, line)``: its byte span
(``end`` exclusive, trailing blank lines left out) and its first line's number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

HEADER = b"# aider chat started at "
START = re.compile(rb"\n[#>]")
"""A line that may be a header, user input or tool output (the first line is checked apart)."""
CONTENT = re.compile(rb"\S")
LINE_BREAK = re.compile(rb"\S  \r?\n")
"""The end of a multi-line tool message: its last line, stripped, then two spaces (a line of the
message that is only spaces does not end it)."""
WHITE = b" \t\r\n"
BLOCK = 1 << 22

RUN, USER, TOOL, REPLY = "run", "user", "tool", "reply"

Record = tuple[str, int, int, int]


def breaks(line: bytes) -> bool:
    """The line ends in Aider's two-space line break."""
    return line.rstrip(b"\r\n").endswith(b"  ")


def is_tool(line: bytes) -> bool:
    return line[:1] == b">" and line[1:2] in (b" ", b"\r", b"\n", b"")


def is_user(line: bytes) -> bool:
    return line.startswith(b"#### ") or line.rstrip() == b"####"


class Scanner:
    """Turns blocks of the file (each ending at a line end) into records, keeping its state between
    blocks; offsets and line numbers are the file's."""

    def __init__(self, *, offset: int = 0, line: int = 1) -> None:
        self.out: list[Record] = []
        self.base = offset
        self.line = line
        """Line number at :attr:`counted` (1-based)."""
        self.counted = offset
        self.buf = b""
        self.open: tuple[str, int, int] | None = None
        """The record being read: ``(kind, start, line)``."""
        self.end = 0
        """Where the open record ends so far (file offset)."""
        self.continued = False
        """The open tool message waits for its line that ends in two spaces."""

    def line_of(self, pos: int) -> int:
        """Line number of file offset ``pos`` (offsets asked for never go back)."""
        if pos > self.counted:
            self.line += self.buf.count(b"\n", self.counted - self.base, pos - self.base)
            self.counted = pos
        return self.line

    # -- records ---------------------------------------------------------------------------------
    def begin(self, kind: str, start: int, end: int) -> None:
        self.close()
        self.open = (kind, start, self.line_of(start))
        self.end = end

    def close(self) -> None:
        if self.open is not None:
            kind, start, line = self.open
            self.out.append((kind, start, max(self.end, start), line))
            self.open = None
            self.continued = False

    # -- scanning --------------------------------------------------------------------------------
    def feed(self, buf: bytes, base: int) -> list[Record]:
        """The records completed in ``buf`` (which starts at file offset ``base``)."""
        self.buf, self.base = buf, base
        self.counted = max(self.counted, base)
        pos = self._line(0) if buf[:1] in (b"#", b">") else 0
        for m in START.finditer(buf, pos):
            s = m.start() + 1
            if s < pos:
                continue
            self._gap(pos, s)
            pos = self._line(s)
        self._gap(pos, len(buf))
        self.line_of(base + len(buf))  # the next block counts from its own start
        out, self.out = self.out, []
        return out

    def finish(self) -> list[Record]:
        self.close()
        out, self.out = self.out, []
        return out

    def _gap(self, a: int, b: int) -> None:
        """Plain lines ``buf[a:b]`` (none of them starts with ``#`` or ``>``)."""
        if a >= b:
            return
        buf, base = self.buf, self.base
        if self.continued:
            m = LINE_BREAK.search(buf, a, b)
            if m is None:
                self.end = base + b
                return
            self.end = base + m.end()
            self.close()
            a = m.end()
        if self.open is not None and self.open[0] == REPLY:
            self._reply_to(a, b)
            return
        m = CONTENT.search(buf, a, b)
        if m is None:
            self.close()  # a blank line ends user input
            return
        start = buf.rfind(b"\n", a, m.start()) + 1 or a
        self.begin(REPLY, base + start, base + start)
        self._reply_to(start, b)

    def _reply_to(self, a: int, b: int) -> None:
        j = b
        while j > a and self.buf[j - 1] in WHITE:
            j -= 1
        if j > a:
            self.end = self.base + j

    def _line(self, s: int) -> int:
        """Handle the line at ``buf[s]`` (it starts with ``#`` or ``>``); returns its end."""
        buf = self.buf
        e = buf.find(b"\n", s)
        e = len(buf) if e < 0 else e + 1
        line = buf[s:e]
        start, end = self.base + s, self.base + e
        kind = self.open[0] if self.open is not None else None
        if line.startswith(HEADER):
            self.begin(RUN, start, end - _eol(line))
            self.close()
        elif is_user(line) and (kind != REPLY or breaks(line)):
            if kind != USER or self.continued:
                self.begin(USER, start, end)
            self.end = end - _eol(line)
        elif self.continued:
            self.end = end - _eol(line)
            if LINE_BREAK.search(line if line.endswith(b"\n") else line + b"\n"):
                self.close()
        elif is_tool(line) and (kind != REPLY or breaks(line)):
            self.begin(TOOL, start, end - _eol(line))
            if breaks(line) or line.strip() == b">":
                self.close()
            else:
                self.continued = True
        elif kind == REPLY:
            self._reply_to(s, e)
        else:
            self.begin(REPLY, start, start)
            self._reply_to(s, e)
        return e


def _eol(line: bytes) -> int:
    return 2 if line.endswith(b"\r\n") else 1 if line.endswith(b"\n") else 0


def records(f: BinaryIO, *, start: int = 0, stop: int | None = None, line: int = 1) -> Iterator[Record]:
    """Every record of the file from byte ``start`` (at line ``line``) to ``stop``."""
    sc = Scanner(offset=start, line=line)
    f.seek(start)
    offset = start
    carry = b""
    while True:
        want = BLOCK if stop is None else min(BLOCK, stop - offset - len(carry))
        block = f.read(want) if want > 0 else b""
        data = carry + block
        if not block:
            if data:
                yield from sc.feed(data, offset)
            break
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        yield from sc.feed(data[:cut], offset)
        offset += cut
        carry = data[cut:]
    yield from sc.finish()
