"""The bundle file: one JSON object, a DSSE envelope with the source files carried beside it.

    {"mediaType": "application/vnd.walkback.bundle.v1+json",
     "artifacts": [{"name": "journal.jsonl", "size": 1234, "data": "<base64>"}, ...],
     "payloadType": "application/vnd.in-toto+json", "payload": "<base64 Statement>",
     "signatures": [{"keyid": "SHA256:…", "sig": "<base64>"}],
     "signer": {"publicKey": "ssh-ed25519 AAAA…"}}

The artifacts come first so that a bundle is written in one pass over the sources (the statement,
which names their digests, is known only at the end); DSSE readers ignore the fields they do not
know. Both directions stream: a source is read, hashed and base64-encoded a block at a time, and
reading a bundle decodes each artifact's data into a file as it goes, so neither side ever holds
a 450 MB source (or its base64) as one string.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

import orjson
import pybase64
from walkback.journal.errors import UnusableBundle

from .merkle import LineLeaves

MEDIA_TYPE = "application/vnd.walkback.bundle.v1+json"
MEDIA_PREFIX = "application/vnd.walkback.bundle."
BLOCK = 3 << 20
"""Bytes of a source read (and base64-encoded) at a time; a multiple of 3, so blocks encode alone."""
READ = 1 << 22
"""Bytes of a bundle read at a time."""


@dataclass
class Carried:
    """What one pass over a source's bytes gives: its digest, its size and its line leaves."""

    name: str
    sha256: str = ""
    size: int = 0
    leaves: LineLeaves = field(default_factory=LineLeaves)
    file: Path | None = None
    """Where a bundle being read decoded it to."""


def _stream(f: IO[bytes], item: Carried, sink: Callable[[bytes], Any]) -> None:
    """Hash ``f`` into ``item`` while passing every block to ``sink``."""
    digest = hashlib.sha256()
    feed = item.leaves.feed
    while block := f.read(BLOCK):
        digest.update(block)
        feed(block)
        item.size += len(block)
        sink(block)
    item.leaves.finish()
    item.sha256 = digest.hexdigest()


def check_name(name: Any) -> str:
    """An artifact name is a relative POSIX path that stays inside the bundle.

    Raises:
        UnusableBundle: an absolute path, ``..``, an empty part, a backslash or a NUL.
    """
    p = PurePosixPath(name) if isinstance(name, str) else None
    if (
        p is None
        or not name
        or p.is_absolute()
        or any(part in ("", ".", "..") for part in name.split("/"))
        or "\\" in name
        or "\0" in name
    ):
        raise UnusableBundle(f"artifact name {name!r} is not a relative path inside the bundle")
    return name


def write(
    out: IO[bytes],
    sources: list[tuple[str, Path]],
    envelope: Callable[[list[Carried]], dict[str, Any]],
) -> list[Carried]:
    """Write a bundle carrying ``sources`` (``(name, path)``), then the envelope ``envelope``
    returns once it has seen what was carried (its keys follow the artifacts)."""
    out.write(b'{"mediaType":' + orjson.dumps(MEDIA_TYPE) + b',"artifacts":[')
    carried = []
    for k, (name, path) in enumerate(sources):
        item = Carried(check_name(name))
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = {"name": name, "size": size}
            out.write((b"," if k else b"") + orjson.dumps(head)[:-1] + b',"data":"')
            _stream(f, item, lambda block: out.write(pybase64.b64encode(block)))
        if item.size != size:
            raise UnusableBundle(f"{name} changed while it was bundled", path=path)
        out.write(b'"}')
        carried.append(item)
    out.write(b"]")
    for key, value in envelope(carried).items():
        out.write(b"," + orjson.dumps(key) + b":")
        if isinstance(value, bytes):  # base64 (the payload): nothing to escape, written in place
            out.write(b'"')
            out.write(value)
            out.write(b'"')
        else:
            out.write(orjson.dumps(value))
    out.write(b"}\n")
    return carried


# -- reading ------------------------------------------------------------------------------------------
class _Data:
    """The base64 of one artifact's data, decoded into a file as it arrives."""

    def __init__(self, path: Path, index: int) -> None:
        self.path = path
        self.item = Carried(name=f"#{index}", file=path)
        self._file = open(path, "xb")  # noqa: SIM115 - closed by close()
        self._digest = hashlib.sha256()
        self._pending = b""

    def add(self, text: bytes) -> None:
        text = self._pending + text
        cut = len(text) // 4 * 4
        self._pending = text[cut:]
        if cut:
            self._write(text[:cut])

    def _write(self, text: bytes) -> None:
        try:
            data = pybase64.b64decode(text.translate(_URLSAFE), validate=True)
        except ValueError:
            raise UnusableBundle(f"artifact {self.item.name}: data is not base64") from None
        self._digest.update(data)
        self.item.leaves.feed(data)
        self.item.size += len(data)
        self._file.write(data)

    def close(self) -> None:
        if self._pending:
            self._write(self._pending + b"=" * (-len(self._pending) % 4))
        self._file.close()
        self.item.leaves.finish()
        self.item.sha256 = self._digest.hexdigest()


_URLSAFE = bytes.maketrans(b"-_", b"+/")


@dataclass
class Opened:
    """A bundle read once: its JSON without the artifacts' data, and the data decoded to files."""

    doc: dict[str, Any]
    data: list[_Data]
    """Per artifact, in order: the file its data was decoded into, with digest and leaves."""
    payload: bytearray | None = None
    """The envelope's ``payload`` text (base64), taken out of ``doc`` (where it is ``""``): a
    million events' statement is some 140 MB of it, not to be held three times over."""


def read(f: IO[bytes], into: Path, *, origin: str) -> Opened:
    """Read the bundle from ``f``, decoding each artifact's data into a file under ``into``.

    Raises:
        UnusableBundle: not JSON, not a walkback bundle, or artifact data that is not base64.
    """
    scanner = _Scanner(f, into, origin)
    try:
        skeleton = scanner.run()
    finally:
        for d in scanner.data:
            if not d._file.closed:
                d._file.close()
    try:
        doc = orjson.loads(skeleton)
    except orjson.JSONDecodeError as e:
        what = "" if MEDIA_PREFIX.encode() in skeleton else "not a walkback bundle: "
        raise UnusableBundle(f"{what}not JSON: {e}", path=origin) from None
    if not isinstance(doc, dict) or not str(doc.get("mediaType", "")).startswith(MEDIA_PREFIX):
        raise UnusableBundle(
            "not a walkback bundle (no mediaType application/vnd.walkback.bundle.*)", path=origin
        )
    if doc["mediaType"] != MEDIA_TYPE:
        raise UnusableBundle(
            f"bundle version {doc['mediaType']!r} is not one this walkback reads ({MEDIA_TYPE})", path=origin
        )
    return Opened(doc, scanner.data, scanner.payload)


class _Scanner:
    """A JSON tokenizer just deep enough to find ``artifacts[*].data``: every other byte is copied
    into a skeleton that orjson then parses (and validates) whole; the data strings stream into
    :class:`_Data` files, leaving ``""`` in the skeleton."""

    def __init__(self, f: IO[bytes], into: Path, origin: str) -> None:
        self.f = f
        self.into = into
        self.origin = origin
        self.buf = b""
        self.pos = 0
        self.out: list[bytes] = []
        self.data: list[_Data] = []
        self.payload: bytearray | None = None
        self.stack: list[list[Any]] = []
        """Open containers: ``["{", key, expect_key, keys seen]`` or ``["[", index]``."""

    def _more(self) -> bool:
        block = self.f.read(READ)
        if not block:
            return False
        self.buf = self.buf[self.pos :] + block
        self.pos = 0
        return True

    def _in_artifact_data(self) -> bool:
        s = self.stack
        return (
            len(s) == 3
            and s[0][0] == "{"
            and s[0][1] == "artifacts"
            and s[1][0] == "["
            and s[2][0] == "{"
            and s[2][1] == "data"
            and not s[2][2]
        )

    def run(self) -> bytes:
        out = self.out
        while True:
            if self.pos >= len(self.buf) and not self._more():
                break
            c = self.buf[self.pos]
            if c == 0x22:  # a string
                top = self.stack[-1] if self.stack else None
                is_key = top is not None and top[0] == "{" and top[2]
                if not is_key and self._in_artifact_data():
                    self._data()
                    out.append(b'""')
                elif not is_key and len(self.stack) == 1 and top is not None and top[1] == "payload":
                    self.payload = bytearray()  # kept as bytes, never copied into the skeleton
                    self._plain(self.payload.extend, "the payload")
                    out.append(b'""')
                else:
                    text = self._string()
                    out.append(text)
                    if is_key:
                        assert top is not None
                        try:
                            top[1] = orjson.loads(text)
                        except orjson.JSONDecodeError:
                            top[1] = None
                        self._once(top)
                continue
            self.pos += 1
            if c == 0x7B:  # {
                self.stack.append(["{", None, True, set()])
            elif c == 0x5B:  # [
                self.stack.append(["[", 0])
            elif c in (0x7D, 0x5D):  # } ]
                if self.stack:
                    self.stack.pop()
            elif c == 0x3A and self.stack and self.stack[-1][0] == "{":  # :
                self.stack[-1][2] = False
            elif c == 0x2C and self.stack:  # ,
                top = self.stack[-1]
                if top[0] == "{":
                    top[2] = True
                else:
                    top[1] += 1
            out.append(bytes((c,)))
            if len(out) > 4096:
                out[:] = [b"".join(out)]
        return b"".join(out)

    def _once(self, top: list[Any]) -> None:
        """A key said twice in one object is refused: JSON readers disagree on which value wins
        (orjson and jq take the last, others the first), so a bundle must not hold two."""
        if top[1] in top[3]:
            raise UnusableBundle(
                f"duplicate key {top[1]!r} in {json_path(self.stack)}: a bundle holds each key once",
                path=self.origin,
            )
        top[3].add(top[1])

    def _string(self) -> bytes:
        """One whole string token (quotes included); escapes are honoured, not decoded."""
        parts = []
        start = self.pos
        i = start + 1
        while True:
            end = _UNITS.match(self.buf, i).end()  # type: ignore[union-attr]  # always matches
            if end < len(self.buf) and self.buf[end] == 0x22:
                parts.append(self.buf[start : end + 1])
                self.pos = end + 1
                return b"".join(parts)
            parts.append(self.buf[start:end])  # the block ends inside the string (or its escape)
            self.pos = end
            if not self._more():
                raise UnusableBundle("not JSON: a string is not closed", path=self.origin)
            start = i = 0

    def _data(self) -> None:
        index = len(self.data)
        d = _Data(self.into / f"artifact-{index}", index)
        self.data.append(d)
        self._plain(d.add, f"artifact {index}: data")
        d.close()

    def _plain(self, sink: Callable[[bytes], Any], what: str) -> None:
        """Pass the contents of a string without escapes (base64) to ``sink``, a block at a time."""
        self.pos += 1
        while True:
            j = self.buf.find(b'"', self.pos)
            chunk = self.buf[self.pos : j if j >= 0 else len(self.buf)]
            if b"\\" in chunk:
                raise UnusableBundle(f"{what} is not plain base64", path=self.origin)
            sink(chunk)
            if j >= 0:
                self.pos = j + 1
                return
            self.pos = len(self.buf)
            if not self._more():
                raise UnusableBundle(f"not JSON: the bundle ends inside {what}", path=self.origin)


def json_path(stack: list[list[Any]]) -> str:
    """``$.artifacts[1]``: where the innermost open container of ``stack`` is."""
    return "$" + "".join(f"[{c[1]}]" if c[0] == "[" else f".{c[1]}" for c in stack[:-1])


_UNITS = re.compile(rb'(?:[^"\\]++|\\.)*+', re.S)
"""The longest run of whole string units (plain bytes, two-byte escapes) from a position."""
