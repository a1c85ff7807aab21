"""Where an Inspect log keeps its samples, read one sample at a time.

* ``.eval``: a zip; ``header.json`` (or, while the eval runs, ``_journal/start.json``) and one
  member per sample, ``samples/<id>_epoch_<n>.json``. Only the member being mapped is inflated.
* ``.json``: one document whose ``samples`` are found as byte spans (:mod:`._scan`).
* any other JSON document holding an ``events`` list (one sample on its own, an event list): one
  session, no parts.

Each sample is named ``<id>_epoch_<n>`` (``log.eval#<name>`` opens it alone).
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.errors import ImporterError
from walkback.timeline.sources import JsonItems, JsonSpan, Source

from ..fields import mapping
from ..records import BOM
from ._scan import SampleScan

ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    RuntimeError,
    NotImplementedError,
    struct.error,
    KeyError,
)
"""What :mod:`zipfile` raises for a damaged archive or member (bad CRC, cut deflate stream ...)."""
SAMPLE_MEMBER = re.compile(r"samples/([^/]+)\.json")
_ID_EPOCH = re.compile(rb'\A\{\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*,\s*"epoch"\s*:\s*(\d+)')
LOG_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*\d+\s*,')


class Unreadable(Exception):
    """A sample whose member or bytes cannot be parsed (becomes a placeholder row)."""

    def __init__(self, reason: str, status: str = "corrupt") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass
class Sample:
    """One sample of a log, not yet parsed."""

    part: str
    """``<id>_epoch_<n>``, or ``""`` for a document that is one session."""
    load: Callable[[], dict[str, Any]]
    """The sample's document (raises :class:`Unreadable`)."""
    source: Callable[[str], Source]
    """The source of the array at a pointer inside the sample (``/events``)."""
    where: str
    """The sample's place, for a placeholder's reason (``log.eval!samples/1_epoch_1.json``)."""


def part_name(sample_id: object, epoch: object) -> str:
    return f"{sample_id}_epoch_{epoch}"


def natural(part: str) -> tuple[Any, ...]:
    """Sort key: sample ids as numbers where they are numbers, then the epoch."""
    sid, _, epoch = part.rpartition("_epoch_")
    n = int(epoch) if epoch.isdigit() else 0
    return (0, int(sid), "", n) if sid.isdigit() else (1, 0, sid or part, n)


def _parse(data: bytes, where: str) -> dict[str, Any]:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise Unreadable(f"{where} is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise Unreadable(f"{where} is a JSON {type(doc).__name__}, not a sample")
    return doc


class EvalLog:
    """An ``.eval`` zip (see the module docstring); use as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
            names = self.zip.namelist()
        except ZIP_ERRORS as e:
            raise ImporterError(f"not a readable .eval log (zip): {e}", path=path) from None
        self.members = {m.group(1): n for n in names if (m := SAMPLE_MEMBER.fullmatch(n))}
        self.header: dict[str, Any] = {}
        self.header_member: str | None = None
        """The member the header was read from (a running eval has only ``_journal/start.json``)."""
        self.note = ""
        for name in ("header.json", "_journal/start.json"):
            if name in names:
                try:
                    self.header = _parse(self.zip.read(name), f"{path.name}!{name}")
                except (Unreadable, *ZIP_ERRORS) as e:
                    self.note = f"{name}: {e}"
                    continue
                self.header_member = name
                break

    def __enter__(self) -> EvalLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.zip.close()

    def parts(self) -> list[str]:
        return sorted(self.members, key=natural)

    def samples(self, only: str | None) -> Iterator[Sample]:
        for part in [only] if only is not None else self.parts():
            member = self.members[part]
            yield Sample(part, self._loader(member), self._sources(member), f"{self.path.name}!{member}")

    def _loader(self, member: str) -> Callable[[], dict[str, Any]]:
        def load() -> dict[str, Any]:
            try:
                data = self.zip.read(member)
            except ZIP_ERRORS as e:
                raise Unreadable(f"{member} cannot be inflated: {e}") from None
            return _parse(data, member)

        return load

    def _sources(self, member: str) -> Callable[[str], Source]:
        return lambda pointer: JsonItems(self.path, pointer, member=member)


class JsonLog:
    """A ``.json`` log, its samples found as byte spans (see :mod:`._scan`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: dict[str, Any] = {}
        self.note = ""
        try:
            self.f = open(path, "rb")  # noqa: SIM115 - closed by __exit__
        except OSError as e:
            raise ImporterError(f"cannot read: {e.strerror}", path=path) from None

    def __enter__(self) -> JsonLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()

    def _scan(self) -> Iterator[tuple[int, str, int, bytes, bool]]:
        """``(index, part, start, bytes, torn)`` of every sample; fills :attr:`header` first."""
        self.f.seek(0)
        scan = SampleScan(self.f)
        k = -1
        try:
            for k, span in enumerate(scan):
                if k == 0:
                    self._header(scan.header)
                yield k, _span_part(span.data, k), span.start, span.data, span.torn
        except OSError as e:
            raise ImporterError(f"cannot read: {e.strerror}", path=self.path) from None
        if k < 0:
            self._header(scan.header or None)

    def _header(self, data: bytes | None) -> None:
        """The log without its samples; damage there is a note (the samples may be fine), but a log
        that has no samples and is not JSON cannot be read at all."""
        try:
            doc = orjson.loads(data.removeprefix(BOM)) if data is not None else _whole(self.path)
        except orjson.JSONDecodeError as e:
            if data is None:
                raise ImporterError(
                    f"not an Inspect log: not JSON ({e.msg})", path=self.path, line=e.lineno
                ) from None
            self.note = f"the log's header is not JSON: {e.msg}"
            return
        if not isinstance(doc, dict):
            raise ImporterError("not an Inspect log: not a JSON object", path=self.path, line=1)
        doc.pop("samples", None)
        self.header = doc

    def parts(self) -> list[str]:
        return [part for _, part, *_ in self._scan()]

    def samples(self, only: str | None) -> Iterator[Sample]:
        found = False
        for k, part, start, data, torn in self._scan():
            if only is not None and part != only:
                continue
            found = True
            yield Sample(
                part,
                _bytes_loader(data, torn, f"/samples/{k}"),
                self._sources(start, len(data), k),
                f"{self.path.name}#/samples/{k}",
            )
        if only is not None and not found:
            raise KeyError(only)

    def _sources(self, start: int, length: int, k: int) -> Callable[[str], Source]:
        return lambda pointer: JsonSpan(self.path, start, length, pointer, base=f"/samples/{k}")


class Document:
    """A JSON document that is one session: a sample on its own, or an event list."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            doc = _whole(path)
        except orjson.JSONDecodeError as e:
            raise ImporterError(f"not JSON: {e.msg}", path=path, line=e.lineno) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
            raise ImporterError("not an Inspect log: no events list", path=path, line=1)
        self.doc = doc
        self.header = {k: v for k, v in doc.items() if k in ("description", "version", "status", "eval")}
        self.note = ""

    def __enter__(self) -> Document:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def parts(self) -> list[str]:
        return []

    def samples(self, only: str | None) -> Iterator[Sample]:
        own = part_name(self.doc["id"], self.doc["epoch"]) if "id" in self.doc and "epoch" in self.doc else ""
        yield Sample(own, lambda: self.doc, lambda pointer: JsonItems(self.path, pointer), self.path.name)


def _whole(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ImporterError(f"cannot read: {e.strerror}", path=path) from None
    return orjson.loads(data.removeprefix(BOM))


def _span_part(data: bytes, k: int) -> str:
    """A sample's name from its first bytes (Inspect writes ``id`` and ``epoch`` first)."""
    m = _ID_EPOCH.match(data)
    if m is not None:
        try:
            sid = orjson.loads(m.group(1))
        except orjson.JSONDecodeError:
            sid = None
        if sid is not None:
            return part_name(sid, int(m.group(2)))
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        doc = None
    d = mapping(doc)
    if "id" in d and "epoch" in d and isinstance(d["id"], (str, int)):
        return part_name(d["id"], d["epoch"])
    return f"sample-{k + 1}"


def _bytes_loader(data: bytes, torn: bool, where: str) -> Callable[[], dict[str, Any]]:
    def load() -> dict[str, Any]:
        if torn:
            raise Unreadable(f"the log ends inside the sample at {where}", status="torn")
        return _parse(data, where)

    return load


Log = EvalLog | JsonLog | Document


def open_log(path: Path, head: bytes) -> Log:
    """The reader for ``path``: a zip, a ``.json`` log, or a document that is one session."""
    if head.startswith(b"PK"):
        return EvalLog(path)
    if LOG_HEAD.match(head):
        return JsonLog(path)
    return Document(path)
