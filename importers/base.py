"""The Importer contract, and the reading helpers every JSON-lines importer shares.

An importer is the mapping from one format to timeline events and nothing else: the
:class:`~walkback.timeline.builder.SessionBuilder` it is handed owns interning, columns, chunks,
pairing, agents and the count of skipped records.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import orjson
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import Detail, Usage
from walkback.timeline.session import Session

BOM = b"\xef\xbb\xbf"
HEAD_BYTES = 65536
"""Bytes of a file's start that detection looks at."""
BLOCK = 1 << 22

# Detection scores: an importer says how sure it is; the highest wins (ties are an error).
NO = 0
WEAK = 10
"""Only the name or the extension fits."""
LIKELY = 50
"""The structure fits (the right container, the right top-level keys)."""
CERTAIN = 100
"""A field only this format writes (a header type, a version key)."""


@runtime_checkable
class Importer(Protocol):
    """One source format. Register it through the ``register_importers`` plugin hook."""

    name: str
    """What ``show --json`` calls the format (``claude-code``, ``codex``, ``walkback`` ...)."""

    def score(self, path: Path, head: bytes) -> int:
        """How sure this importer is that ``path`` is its format: :data:`NO` … :data:`CERTAIN`.

        ``head`` is the file's first :data:`HEAD_BYTES` (empty for a directory). Look, don't parse
        the whole file; never raise.
        """
        ...

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        """Read ``path`` into ``b``, yielding whenever ``b.due()`` (a viewer shows the session so
        far); raise :class:`ImporterError` with the file and line for input it cannot read.

        ``part`` selects one session of a file that holds several (see :meth:`parts`)."""
        ...

    def details(self, session: Session, i: int) -> Detail:
        """The typed detail of event ``i`` of a session this importer read (from its raw record)."""
        ...


class MustReread(Exception):
    """An importer cannot extend a session with what its sources appended (a file was replaced
    or rewritten, a torn line was completed): the session must be read again whole."""


@runtime_checkable
class Follows(Protocol):
    """An importer that can read what its sources appended since a session was read (live follow
    at the cost of the new bytes)."""

    def extend(self, b: SessionBuilder) -> Iterator[None]:
        """Append the new events to ``b`` (which extends the session), yielding as ``read`` does.

        Raises:
            MustReread: the session must be read again whole.
        """
        ...


@runtime_checkable
class MultiSession(Protocol):
    """An importer whose files can hold several sessions (Inspect: one per sample)."""

    def parts(self, path: Path) -> list[str]:
        """The names of the sessions in ``path`` (empty: the file is one session)."""
        ...


def head(path: Path) -> bytes:
    """The first bytes detection looks at (empty for a directory or an unreadable file)."""
    if path.is_dir():
        return b""
    try:
        with open(path, "rb") as f:
            return f.read(HEAD_BYTES)
    except OSError:
        return b""


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
            b.placeholder(
                src=src,
                line=line_no,
                offset=offset,
                length=len(raw),
                status="corrupt",
                reason=f"not JSON: {e}",
                text=raw[:200].decode("utf-8", "replace"),
            )
            continue
        if not isinstance(rec, dict):
            b.placeholder(
                src=src,
                line=line_no,
                offset=offset,
                length=len(raw),
                status="corrupt",
                reason=f"a JSON {type(rec).__name__}, not an object",
                text=raw[:200].decode("utf-8", "replace"),
            )
            continue
        yield offset, line_no, len(raw), rec


# -- helpers the agent-log importers share (Codex, Gemini CLI, discovery) --------------------------
TEXT_LIMIT = 100_000
"""Characters of a free-text field kept in a detail (the raw record has all of it)."""
FIRST_LINE_LIMIT = 1 << 20
"""Bytes of a file's first line read for its header (a Codex session_meta carries long instructions)."""


def text(value: object) -> str:
    """A field as display text: a string cut to :data:`TEXT_LIMIT`, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:TEXT_LIMIT]
    return orjson.dumps(value, default=str).decode()[:TEXT_LIMIT]


def string(value: object) -> str:
    """A field that should be a string, or ``""`` (logs are written by models and may hold anything)."""
    return value if isinstance(value, str) else ""


def integer(value: object) -> int | None:
    """A field that should be an integer (never a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mapping(value: object) -> dict:  # type: ignore[type-arg]
    """A field that should be a JSON object, or an empty one."""
    return value if isinstance(value, dict) else {}


def embedded_json(value: object) -> object:
    """The value of a field some writers store as a JSON string (Codex arguments, Gemini args)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def relative(path: str, root: str) -> str:
    """``path`` relative to the workspace ``root`` when it lies inside it (as the contract names files)."""
    root = root.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path


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


def usage(given: object, cached: object, output: object, reasoning: object, total: object) -> Usage:
    """Token usage from counts whose prompt tokens include the cache reads (OpenAI, Gemini): the
    contract's input tokens exclude them."""
    prompt, hits = integer(given), integer(cached)
    return Usage(
        input_tokens=prompt - (hits or 0) if prompt is not None else None,
        output_tokens=integer(output),
        cache_read_tokens=hits,
        reasoning_tokens=integer(reasoning),
        total_tokens=integer(total),
    )


RUNNING_SECONDS = 120.0
"""A session whose file and last record are this recent is taken to be still running."""


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


# -- helpers the JSON-document importers share (Copilot legacy, OpenHands, SWE-agent) -------------
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


@dataclass(frozen=True)
class DiffFile:
    """One file's part of a unified diff (git's, or a plain ``---``/``+++`` one)."""

    path: str
    operation: str
    """``create``, ``update``, ``delete`` or ``move``."""
    patch: str
    """This file's lines of the diff, exactly as written."""
    moved_to: str | None = None

    @property
    def added_text(self) -> str | None:
        """The whole new file of a diff that creates it (its ``+`` lines), else None."""
        if self.operation != "create":
            return None
        lines = self.patch.splitlines(keepends=True)
        start = next((k for k, line in enumerate(lines) if line.startswith("@@")), len(lines))
        out = [line[1:] for line in lines[start:] if line.startswith("+")]
        if out and lines[-1].startswith("\\"):  # "\ No newline at end of file"
            out[-1] = out[-1].rstrip("\r\n")
        return "".join(out)


_GIT_DIFF = re.compile(r"diff --git a/(.*?) b/(.*?)\s*$")


def split_diff(text: str) -> list[DiffFile]:
    """The files a unified diff changes, in order, each with its own part of the text (a
    submission, a tool's diff output). Empty for text that is not a diff."""
    lines = text.splitlines(keepends=True)
    starts = [k for k, line in enumerate(lines) if line.startswith("diff --git ")]
    if not starts:
        starts = [
            k
            for k in range(len(lines) - 1)
            if lines[k].startswith("--- ") and lines[k + 1].startswith("+++ ")
        ]
    if not starts:
        return []
    ends = [*starts[1:], len(lines)]
    return [f for s, e in zip(starts, ends, strict=True) if (f := _diff_file(lines[s:e])) is not None]


def _diff_path(given: str) -> str | None:
    """A ``---``/``+++`` header's path (``a/``/``b/`` and a trailing time dropped; None: /dev/null)."""
    path = given.split("\t", 1)[0].strip()
    if path == "/dev/null" or not path:
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


def _diff_file(part: list[str]) -> DiffFile | None:
    old: str | None = None
    new: str | None = None
    op, moved = "update", None
    seen_old = seen_new = False
    for raw in part:
        line = raw.rstrip("\r\n")
        if line.startswith("@@"):
            break
        if line.startswith("new file mode"):
            op = "create"
        elif line.startswith("deleted file mode"):
            op = "delete"
        elif line.startswith("rename to "):
            moved = line[len("rename to ") :]
        elif line.startswith("--- ") and not seen_old:
            old, seen_old = _diff_path(line[4:]), True
        elif line.startswith("+++ ") and not seen_new:
            new, seen_new = _diff_path(line[4:]), True
    m = _GIT_DIFF.match(part[0].rstrip("\r\n"))
    if m is not None:
        old = old if seen_old else m.group(1)
        new = new if seen_new else m.group(2)
    if seen_old and old is None:
        op = "create"
    if seen_new and new is None:
        op = "delete"
    path = (old if op == "delete" else new) or old
    if not path:
        return None
    if moved and op == "update":
        return DiffFile(old or path, "move", "".join(part), moved)
    return DiffFile(path, op, "".join(part))


def in_force(changes: object, line: int) -> object:
    """The value in force at ``line`` from ``[[line, value], ...]`` changes in file order (a model
    switched mid-session); None before the first."""
    if not isinstance(changes, list):
        return None
    found = None
    for change in changes:
        if not isinstance(change, list) or len(change) != 2 or not isinstance(change[0], int):
            continue
        if change[0] > line:
            break
        found = change[1]
    return found
