"""Cutting an Aider chat history into records, a block of the file at a time.

Aider writes four things into ``.aider.chat.history.md`` (``aider/io.py``), and each has a shape the
scanner keys on:

* a run header, ``# aider chat started at 2024-08-05 19:33:02``;
* user input, every line ``#### <text>`` ending in two spaces (a markdown line break);
* tool output, ``> <text>`` ending in two spaces; a multi-line message from ``tool_output`` has the
  ``> `` on its first line only and runs to the first line with text that ends in two spaces.
  Lines that mean something (:data:`._lines.SPECIAL`, a prompt and its answer) are records of
  their own; a run of the other tool lines is one ``plain`` record;
* the assistant's reply, plain text between blank lines. Inside a reply a ``> `` or ``#### ``
  line is the model's markdown unless it ends in two spaces, as only Aider's own lines do.

Only line starts with ``#`` or ``>`` are looked at one by one (found by a regex over the block);
the lines between them are skipped in C. A record is ``(kind, start, end, line, head)``: its byte
span (``end`` exclusive, trailing blank lines left out), its first line's number, and that line's
bytes (empty for a reply, which is read whole when it is mapped).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from ._lines import SPECIAL, asks

HEADER = b"# aider chat started at "
START = re.compile(rb"\n[#>]")
"""A line that may be a header, user input or tool output (the first line is checked apart)."""
CONTENT = re.compile(rb"\S")
TOOL_RUN = re.compile(rb"(?:> [^\n]*(?<=  )\r?\n)*(?:> [^\n]*\Z)?")
"""Tool lines that each end in two spaces, and the file's last line if it is a tool line without a
line break; a line that ends otherwise (a bare ``>``, a multi-line message's first) ends the run."""
SPECIAL_LINE = re.compile(
    rb"\n(?=" + SPECIAL.pattern + rb"|> [^\n]*\?[^\n]* [ynasd][ \t]*\r?(?:\n|\Z))(?P<line>[^\n]*)"
)
"""A tool line that is a record of its own (:data:`._lines.SPECIAL`, or a prompt with its answer),
as ``line``. The newline before it comes first: a pattern that starts with a literal byte is
searched for in C; one that starts with ``(?:\\n|\\A)`` is tried at every byte."""
USER_LINES = re.compile(rb"(?:####(?: [^\n]*|[ \t\r\x0b\x0c]*)\n)+")
"""Whole lines that are each user input (:func:`is_user`): those after a user line extend it."""
TWO_SPACES = re.compile(rb"  \r?\n")
"""A line that ends in two spaces (:func:`_line_break` checks the byte before them: a pattern that
starts with a class of bytes would be tried at every byte)."""
WHITE = b" \t\r\n"
BLOCK = 1 << 22

RUN, USER, TOOL, PLAIN, REPLY = "run", "user", "tool", "plain", "reply"

Record = tuple[str, int, int, int, bytes]


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
        self.kind: str | None = None
        """The kind of the record being read (None: none is). Its file offset, first line, first
        line's bytes and where it ends so far follow (fields, not a tuple: they change per line)."""
        self.start = self.first = self.end = 0
        self.head = b""
        self.continued = False
        """The open tool message waits for its line that ends in two spaces."""

    def records(self, f: BinaryIO, *, stop: int | None = None) -> Iterator[Record]:
        """Every record of the file from the scanner's offset to ``stop``."""
        offset = self.base
        f.seek(offset)
        carry = b""
        while True:
            want = BLOCK if stop is None else min(BLOCK, stop - offset - len(carry))
            block = f.read(want) if want > 0 else b""
            data = carry + block
            if not block:
                if data:
                    yield from self.feed(data, offset)
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            yield from self.feed(data[:cut], offset)
            offset += cut
            carry = data[cut:]
        yield from self.finish()

    def span(self, start: int, end: int) -> bytes | None:
        """The file's bytes ``start:end`` from the block being scanned (None if it lacks some): the
        record just yielded is read without reading the file again."""
        a, b = start - self.base, end - self.base
        return self.buf[a:b] if a >= 0 and b <= len(self.buf) else None

    def line_of(self, pos: int) -> int:
        """Line number of file offset ``pos`` (offsets asked for never go back)."""
        if pos > self.counted:
            self.line += self.buf.count(b"\n", self.counted - self.base, pos - self.base)
            self.counted = pos
        return self.line

    # -- records ---------------------------------------------------------------------------------
    def begin(self, kind: str, start: int, end: int, head: bytes = b"") -> None:
        if self.kind is not None:
            self.close()
        self.kind, self.start, self.first, self.head, self.end = kind, start, self.line_of(start), head, end

    def close(self) -> None:
        if self.kind is not None:
            self.out.append((self.kind, self.start, max(self.end, self.start), self.first, self.head))
            self.kind = None
            self.continued = False

    def one_line(self, start: int, head: bytes) -> None:
        """A tool line that is a record of its own, at file offset ``start``."""
        if self.kind is not None:
            self.close()
        self.out.append((TOOL, start, start + len(head), self.line_of(start), head))

    # -- scanning --------------------------------------------------------------------------------
    def feed(self, buf: bytes, base: int) -> list[Record]:
        """The records completed in ``buf`` (which starts at file offset ``base``)."""
        self.buf, self.base = buf, base
        self.counted = max(self.counted, base)
        pos = self._line(0) if buf[:1] in (b"#", b">") else 0
        search = START.search
        while (m := search(buf, pos - 1 if pos else 0)) is not None:  # the newline ending the last line
            s = m.start() + 1
            if s > pos:
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
            cut = _line_break(buf, a, b)
            if cut < 0:
                self.end = base + b
                return
            self.end = base + cut
            self.close()
            a = cut
        if self.kind == REPLY:
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
        head = buf[s:e].rstrip(b"\r\n")
        start = self.base + s
        stop = start + len(head)
        kind = self.kind
        if head[:1] == b">" and head[1:2] in (b" ", b"") and not self.continued:
            if head.endswith(b"  "):
                return self._tools(s)
            self._tool(head, start, stop, kind)
        elif head.startswith(HEADER):
            self.begin(RUN, start, stop, head)
            self.close()
        elif is_user(head) and (kind != REPLY or head.endswith(b"  ")):
            if kind != USER or self.continued:
                self.begin(USER, start, stop, head)
            more = USER_LINES.match(buf, e)
            if more is not None:
                e = more.end()
                last = buf.rfind(b"\n", s, e - 1) + 1
                stop = self.base + last + len(buf[last:e].rstrip(b"\r\n"))
            self.end = stop
        elif self.continued:
            self.end = stop
            if _line_break(head + b"\n", 0, len(head) + 1) >= 0:
                self.continued = False
                if kind != PLAIN:
                    self.close()
        elif kind == REPLY:
            self._reply_to(s, e)
        else:
            self.begin(REPLY, start, start)
            self._reply_to(s, e)
        return e

    def _tools(self, s: int) -> int:
        """A run of tool lines that each end in a line break, from ``buf[s]``; returns where the
        run ends (at the first line that does not: a multi-line message, handled line by line)."""
        buf = self.buf
        run = TOOL_RUN.match(buf, s)
        x = run.end() if run is not None else s
        pos, base = s, self.base
        if s == 0:  # the block's first line has no newline before it for SPECIAL_LINE
            first = _first_line(buf, x)
            if SPECIAL.match(buf) is not None or asks(first):
                self.one_line(base, first.rstrip(b"\r"))
                pos = min(len(first) + 1, x)
        for m in SPECIAL_LINE.finditer(buf, max(pos - 1, 0), x):
            a = m.start() + 1
            if a > pos:
                self._plain(pos, a)
            self.one_line(base + a, m.group("line").rstrip(b"\r"))
            pos = m.end() + 1  # past its newline
        if x > pos:
            self._plain(pos, x)
        return max(x, s + 1)

    def _plain(self, a: int, b: int) -> None:
        """Plain tool lines ``buf[a:b]``: they join the open plain run, or start one."""
        end = self.base + len(self.buf[a:b].rstrip(b"\r\n")) + a
        if self.kind != PLAIN:
            nl = self.buf.find(b"\n", a, b)
            self.begin(PLAIN, self.base + a, end, self.buf[a : b if nl < 0 else nl].rstrip(b"\r"))
        self.end = end

    def _tool(self, head: bytes, start: int, stop: int, kind: str | None) -> None:
        """A tool line: plain ones join the plain run before them, the others are records."""
        whole = head.endswith(b"  ") or head.strip() == b">"
        if kind == REPLY and not whole:
            self.end = stop  # a markdown quote inside the reply
        elif SPECIAL.match(head) is None and not asks(head):
            if kind != PLAIN:
                self.begin(PLAIN, start, stop, head)
            self.end = stop
            self.continued = not whole
        elif whole:
            self.one_line(start, head)
        else:
            self.begin(TOOL, start, stop, head)
            self.continued = True


def _line_break(buf: bytes, a: int, b: int) -> int:
    """The end of the first line of ``buf[a:b]`` that ends in a non-space and two spaces (the last
    line of a multi-line tool message), or -1."""
    for m in TWO_SPACES.finditer(buf, a, b):
        at = m.start()
        if at > a and not buf[at - 1 : at].isspace():
            return m.end()
    return -1


def _first_line(buf: bytes, stop: int) -> bytes:
    cut = buf.find(b"\n", 0, stop)
    return buf[: stop if cut < 0 else cut]
