"""Reading a source's records from disk: JSON lines a block at a time, the first record (for
detection), a whole JSON document, whether the file is still being written, and the reader base
that puts each event at the address of the record it was read from."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder

BOM = b"\xef\xbb\xbf"
BLOCK = 1 << 22
FIRST_LINE_LIMIT = 1 << 20
"""Bytes of a file's first line read for its header (a Codex session_meta carries long instructions)."""
RUNNING_SECONDS = 120.0
"""A session whose file and last record are this recent is taken to be still running."""


def lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """``(offset, line number, bytes)`` of every non-blank line (without its line end), a block
    at a time; a BOM at the start is skipped. The last line may lack its newline (a torn write)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the with below, across yields
    except OSError as e:
        raise ImporterError(f"cannot read: {e.strerror}", path=path) from None
    with f:
        offset = 0
        line_no = 0
        carry = b""
        first = True
        while True:
            block = f.read(BLOCK)
            if first:
                first = False
                if block.startswith(BOM):
                    block = block[3:]
                    offset = 3
            if not block:
                break
            parts = (carry + block).split(b"\n")
            carry = parts.pop()
            for raw in parts:
                line_no += 1
                size = len(raw) + 1
                text = raw[:-1] if raw.endswith(b"\r") else raw
                if text.strip():
                    yield offset, line_no, text
                offset += size
        if carry.strip():
            yield offset, line_no + 1, carry


def json_lines(path: Path, b: SessionBuilder, src: int) -> Iterator[tuple[int, int, int, dict]]:  # type: ignore[type-arg]
    """``(offset, line, length, record)`` of every JSON-object line; a line that does not parse, or
    is not an object, becomes a placeholder row with the reason (never silently dropped)."""
    loads = orjson.loads
    for offset, line_no, raw in lines(path):
        try:
            rec = loads(raw)
        except orjson.JSONDecodeError as e:
            _unreadable(b, src, line_no, offset, raw, f"not JSON: {e}")
            continue
        if not isinstance(rec, dict):
            _unreadable(b, src, line_no, offset, raw, f"a JSON {type(rec).__name__}, not an object")
            continue
        yield offset, line_no, len(raw), rec


def _unreadable(b: SessionBuilder, src: int, line_no: int, offset: int, raw: bytes, reason: str) -> None:
    b.placeholder(
        src=src,
        line=line_no,
        offset=offset,
        length=len(raw),
        status="corrupt",
        reason=reason,
        text=raw[:200].decode("utf-8", "replace"),
    )


def first_record(path: Path, limit: int = FIRST_LINE_LIMIT) -> dict | None:  # type: ignore[type-arg]
    """The JSON object on a file's first line (None if it is not one, or the file is unreadable)."""
    try:
        with open(path, "rb") as f:
            line = f.readline(limit)
    except OSError:
        return None
    return first_line_record(line)


def first_line_record(data: bytes) -> dict | None:  # type: ignore[type-arg]
    """The JSON object on the first line of ``data`` (a file's head), or None."""
    try:
        rec = orjson.loads(data.removeprefix(BOM).split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return None
    return rec if isinstance(rec, dict) else None


def load_document(path: Path) -> object:
    """A whole JSON document (a BOM skipped); one that cannot be read or is not JSON is an
    :class:`ImporterError` naming the file and line."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ImporterError(f"cannot read: {e.strerror}", path=path) from None
    try:
        return orjson.loads(data.removeprefix(BOM))
    except orjson.JSONDecodeError as e:
        raise ImporterError(f"not a JSON document: {e.msg}", path=path, line=e.lineno) from None


def written_lately(path: Path, last: float | None) -> bool:
    """The agent is still writing ``path``: the file changed, and its last record was stamped,
    within :data:`RUNNING_SECONDS` (a copy of an old session is fresh on disk only)."""
    now = time.time()
    try:
        changed = path.stat().st_mtime
    except OSError:
        return False
    stamped = changed if last is None or last != last else last  # NaN: the record had no time
    return now - changed < RUNNING_SECONDS and now - stamped < RUNNING_SECONDS


class RecordReader:
    """A reader that holds the address of the record it is reading, so that every event it adds
    leads back to that record (source, line, byte span) in the current agent's lane."""

    b: SessionBuilder
    agent: str
    src: int
    line: int
    offset: int
    length: int

    def add(self, kind: str, typ: str, ts: float, **kw: Any) -> int:
        """One event of the current record (``kw``: the rest of :meth:`SessionBuilder.add`)."""
        return self.b.add(
            kind,
            type=typ,
            ts=ts,
            agent=self.agent,
            src=self.src,
            line=self.line,
            offset=self.offset,
            length=self.length,
            **kw,
        )
