"""Mutation fuzz for importers: bad input gets a WalkbackError (one clear line), never a traceback.

``check(path, n)`` copies a corpus file (or folder) to a temporary place, mutates one file of it
``n`` times — byte flips, cuts, deleted and repeated lines, and structure-aware changes that
replace a JSON value by one of another type — and loads each mutant through detection and the
importer, then builds every event's detail. Anything but a WalkbackError is a failure, reported
with the seed that reproduces it.
"""

from __future__ import annotations

import io
import random
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from walkback.importers import load
from walkback.journal.errors import WalkbackError
from walkback.timeline.views import approvals, files_summary

MAX_INPUT = 16_384
"""A JSON-lines input is cut to its first lines up to this size (fuzzing speed, not coverage:
every mapping rule a format has shows up in its first records)."""
ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    2**63,
    1.5e308,
    "",
    "x",
    "\x00",
    "../../etc/passwd",
    [],
    {},
    [[[]]],
    {"type": None},
    [{"type": "text"}],
    "2026-13-45T99:99:99Z",
    float("nan"),
)


ODD_LINES = (b"[1,2]", b"null", b"{}", b'{"type":"user"}', b"\xff\xfe", b'"x"', b"{" * 300)


def _odd(rng: random.Random) -> Any:
    v = rng.choice(ODD_VALUES)
    return None if isinstance(v, float) and v != v else v  # NaN is not JSON


def _mutate_value(doc: Any, rng: random.Random, depth: int = 0) -> Any:
    """Replace, delete or retype one value somewhere in a JSON document."""
    if depth > 12 or not isinstance(doc, (dict, list)) or not doc or rng.random() < 0.25:
        return _odd(rng)
    if isinstance(doc, dict):
        key = rng.choice(list(doc))
        out = dict(doc)
        if rng.random() < 0.2:
            del out[key]
        else:
            out[key] = _mutate_value(doc[key], rng, depth + 1)
        return out
    k = rng.randrange(len(doc))
    out_list = list(doc)
    if rng.random() < 0.15:
        del out_list[k]
    else:
        out_list[k] = _mutate_value(doc[k], rng, depth + 1)
    return out_list


def _json_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    k = rng.randrange(len(lines))
    try:
        rec = orjson.loads(lines[k])
    except orjson.JSONDecodeError:
        return data
    lines[k] = orjson.dumps(_mutate_value(rec, rng))
    return b"\n".join(lines)


def _json_document(data: bytes, rng: random.Random) -> bytes:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return data
    return orjson.dumps(_mutate_value(doc, rng))


def _bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"{"
    op = rng.randrange(6)
    i = rng.randrange(len(data))
    if op == 0:  # flip a byte
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    if op == 1:  # cut the end (a torn write)
        return data[:i]
    if op == 2:  # delete a span
        return data[:i] + data[i + rng.randrange(1, 64) :]
    lines = data.split(b"\n")
    j = rng.randrange(len(lines))
    if op == 3:  # repeat a line
        lines.insert(j, lines[j])
    elif op == 4:  # delete a line
        del lines[j]
    else:  # a line of something else
        lines.insert(
            j, rng.choice([b"[1,2]", b"null", b"{}", b'{"type":"user"}', b"\xff\xfe", b'"x"', b"{" * 300])
        )
    return b"\n".join(lines)


def _zip(data: bytes, rng: random.Random) -> bytes:
    """Mutate one JSON member of a zip (or the zip's bytes themselves)."""
    if rng.random() < 0.3:
        return _bytes(data, rng)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = {n: z.read(n) for n in z.namelist()}
    except (zipfile.BadZipFile, ValueError, EOFError, OSError, NotImplementedError, RuntimeError, zlib.error):
        return data  # an earlier mutation broke the zip itself: leave it broken
    if not members:
        return data
    name = rng.choice(sorted(members))
    members[name] = _json_document(members[name], rng) if rng.random() < 0.8 else _bytes(members[name], rng)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, body in members.items():
            z.writestr(n, body)
    return out.getvalue()


def mutator(path: Path) -> Callable[[bytes, random.Random], bytes]:
    """How to mutate this file: zip members, JSON documents or JSON lines, and raw bytes."""
    head = path.read_bytes()[:4]
    if head.startswith(b"PK"):
        return _zip
    stripped = path.read_bytes().lstrip()[:1]
    structured = _json_document if stripped in (b"[", b"{") and path.suffix != ".jsonl" else _json_lines
    if path.suffix in (".md", ".txt", ".history"):
        return _bytes
    return lambda data, rng: structured(data, rng) if rng.random() < 0.6 else _bytes(data, rng)


def _prefix(data: bytes) -> bytes:
    if len(data) <= MAX_INPUT or data.lstrip()[:1] == b"[" or data[:2] == b"PK" or _document(data):
        return data
    cut = data.rfind(b"\n", 0, MAX_INPUT)
    return data[: cut + 1] if cut > 0 else data


def _exercise(path: Path) -> None:
    """Everything a user's command does with a session: load, details, derived views."""
    s = load(path)
    for i in range(len(s)):
        s.detail(i)
        s.where(i)
    files_summary(s)
    approvals(s)


def _document(data: bytes) -> bool:
    """One indented JSON document (its first line is not a whole value): cut, it would not be JSON."""
    try:
        orjson.loads(data.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return data.lstrip()[:1] == b"{"
    return False


def mutants(source: Path, n: int, seed: int = 0, *, target: str | None = None) -> Iterator[tuple[int, Path]]:
    """``(seed, path)`` of ``n`` mutants of ``source`` (a file, or a folder of which the file
    ``target`` — relative to it — is mutated), each written to the same temporary place."""
    with tempfile.TemporaryDirectory(prefix="walkback-fuzz-") as tmp:
        work = Path(tmp) / source.name
        if source.is_dir():
            shutil.copytree(source, work)
            victim = work / (
                target or next(p.relative_to(source) for p in sorted(source.rglob("*")) if p.is_file())
            )
        else:
            victim = work
            work.write_bytes(source.read_bytes())
        original = _prefix(victim.read_bytes())
        mutate = mutator(victim)
        for k in range(n):
            rng = random.Random(seed + k)
            data = original
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                data = mutate(data, rng)
            victim.write_bytes(data)
            yield seed + k, work


def check(source: Path, n: int = 10_000, *, seed: int = 0, target: str | None = None) -> list[str]:
    """Load ``n`` mutants of ``source``; returns one line per mutant that raised anything but a
    WalkbackError (empty: no traceback would reach a user)."""
    failures: list[str] = []
    for s, path in mutants(source, n, seed, target=target):
        try:
            _exercise(path)
        except WalkbackError as e:
            assert str(e).strip() and "\n" not in str(e), f"seed {s}: the error is not one line: {e!r}"
        except Exception as e:  # noqa: BLE001 - what the fuzz is looking for
            failures.append(f"seed {s}: {type(e).__name__}: {e}")
            if len(failures) >= 10:
                break
    return failures
