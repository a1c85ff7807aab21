"""Importer for Inspect AI eval logs: ``.eval`` (zip) and ``.json``, read without inspect_ai.

A log holds many samples and each sample is a session: ``log.eval#<id>_epoch_<n>`` reads one;
the log on its own reads them all, one agent lane per sample (``show`` lists them as agents, the
viewer lists one session per sample). Samples are parsed one at a time. See
``docs/formats/inspect.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.sources import JsonItems

from ..base import CERTAIN, LIKELY, NO, WEAK, head
from ..fields import mapping, string
from ..records import BOM, written_lately
from ._details import details
from ._logs import EvalLog, JsonLog, Log, open_log
from ._read import SampleReader

NAME = "inspect"
STATUS = {"success": "completed", "error": "failed", "cancelled": "cancelled", "started": "running"}
"""A log's status as a session status."""
_SPEC = ("eval_id", "run_id", "task", "task_id", "model", "created")
"""The eval's facts a session keeps in its header."""
_MEMBERS = (b"header.json", b"_journal/start.json", b"samples/")
_LOG = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z]+"\s*,\s*"eval"\s*:\s*\{')
_EVENTS = re.compile(
    rb'"events"\s*:\s*\[\s*\{[^{}\[\]]{0,600}?"event"\s*:\s*"(?:span_begin|sample_init|model|tool|step|'
    rb'state|store|sandbox|approval|score|subtask|info|logger|input|error|sample_limit)"'
)


class Inspect:
    """Inspect AI eval logs (see the module docstring)."""

    name = NAME

    def score(self, path: Path, head_bytes: bytes) -> int:
        if path.is_dir():
            return NO
        if head_bytes.startswith(b"PK\x03\x04"):
            named = any(m in head_bytes for m in _MEMBERS)
            if path.suffix == ".eval":
                return CERTAIN if named else WEAK
            return LIKELY if named else NO
        text = head_bytes.removeprefix(BOM)
        if _LOG.match(text) and (b'"run_id"' in text or b'"task_id"' in text):
            return CERTAIN
        if _EVENTS.search(text):
            return LIKELY
        return WEAK if path.suffix == ".eval" else NO

    def parts(self, path: Path) -> list[str]:
        with _open(path) as log:
            found = log.parts()
        return found if len(found) > 1 else []

    def read(self, path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
        with _open(path) as log:
            if part is not None and isinstance(log, EvalLog) and part not in log.members:
                raise ImporterError(_no_such(part, log.parts()), path=path)
            if part is not None and not isinstance(log, (EvalLog, JsonLog)):
                raise ImporterError(f"no sample {part!r}: this file is one session", path=path)
            reader = SampleReader(b, run="")
            parts: list[str] = []
            try:
                for sample in log.samples(part):
                    reader.run = string(mapping(log.header.get("eval")).get("run_id"))
                    parts.append(sample.part)
                    yield from reader.sample(sample)
            except KeyError:
                raise ImporterError(_no_such(part or "", log.parts()), path=path) from None
            _log_error(b, log, path)
            _facts(b, log, path, parts, reader.outcomes, whole=part is None)

    details = staticmethod(details)


def _open(path: Path) -> Log:
    data = head(path)
    if not data.strip():
        raise ImporterError("empty file", path=path, line=1)
    return open_log(path, data)


def _no_such(part: str, parts: list[str]) -> str:
    shown = ", ".join(parts[:10]) + (f" ... ({len(parts)} in all)" if len(parts) > 10 else "")
    return f"no sample {part!r} in this log; it holds: {shown or 'no samples'}"


def _log_error(b: SessionBuilder, log: Log, path: Path) -> None:
    """The eval's own error (a failed run), as the last row."""
    if not isinstance(log.header.get("error"), dict):
        return
    member = log.header_member if isinstance(log, EvalLog) else None
    src = b.source(JsonItems(path, "/error", member=member))
    b.add("error", type="eval.error", agent=next(iter(b.session.agents), "main"), status="error", src=src)


def _facts(
    b: SessionBuilder, log: Log, path: Path, parts: list[str], outcomes: list[str], *, whole: bool
) -> None:
    """Session facts: the eval's header, the task, the status."""
    s = b.session
    h = log.header
    spec = mapping(h.get("eval"))
    s.header = {
        "log": type(log).__name__,
        "version": h.get("version"),
        "status": h.get("status"),
        "eval": {k: spec[k] for k in _SPEC if k in spec},
        "inspect_ai": string(mapping(spec.get("packages")).get("inspect_ai")),
        "parts": parts,
    }
    if log.note:
        s.header["note"] = log.note
        b.skip(path, 0, log.note)
    error = mapping(h.get("error"))
    if error:
        s.header["error"] = string(error.get("message"))[:2000]
    if whole and len(parts) > 1:
        s.task = (
            f"{string(spec.get('task')) or 'eval'}: {len(parts)} samples, one lane each "
            f"(open one alone as {path.name}#{parts[0]})"
        )
    else:
        s.task = next((a.task for a in s.agents.values() if a.task), "") or string(spec.get("task"))
    status = STATUS.get(string(h.get("status")), "unknown")
    if isinstance(log, EvalLog) and log.header_member == "_journal/start.json":  # no header.json yet
        status = "running" if written_lately(path, None) else "crashed"
    if error or (len(parts) == 1 and "failed" in outcomes):  # one sample: its outcome is the session's
        status = "failed"
    s.status = status
    if status != "running":
        for a in s.agents.values():
            a.outcome = a.outcome or ("failed" if status == "failed" else "completed")


IMPORTER = Inspect()
