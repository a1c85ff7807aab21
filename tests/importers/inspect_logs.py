"""Minimal Inspect logs written the way Inspect writes them, for the importer's tests: ``.eval``
zips (the journal's start, one member per sample, the header last) and ``.json`` documents
(indented as Inspect writes them, or compact)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import orjson

T0 = "2025-05-12T20:27:36.000000-04:00"
OLD = 1_600_000_000


def at(second: int) -> str:
    return f"2025-05-12T20:27:{36 + second:02d}.000000-04:00"


def event(kind: str, second: int = 0, **fields: Any) -> dict[str, Any]:
    return {"timestamp": at(second), "event": kind, **fields}


def sample(*events: dict[str, Any], sid: Any = 1, epoch: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "epoch": epoch,
        "input": "Fix the bug",
        "target": "ok",
        "messages": [],
        "events": list(events),
        "attachments": {},
        **extra,
    }


HEADER = {
    "version": 2,
    "status": "success",
    "eval": {
        "eval_id": "E1",
        "run_id": "R1",
        "task": "fix",
        "task_id": "T1",
        "model": "openai/gpt-4o",
        "created": T0,
        "packages": {"inspect_ai": "0.3.99"},
    },
}


def eval_log(
    tmp: Path,
    *samples: dict[str, Any],
    header: dict[str, Any] | None = HEADER,
    name: str = "log.eval",
    extra: dict[str, bytes] | None = None,
) -> Path:
    """An ``.eval`` as Inspect writes it: the journal's start, a member per sample, then the header."""
    path = tmp / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", orjson.dumps({"version": 2, "eval": HEADER["eval"]}))
        for s in samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", orjson.dumps(s))
        for member, data in (extra or {}).items():
            z.writestr(member, data)
        if header is not None:
            z.writestr("header.json", orjson.dumps(header))
    return path


def json_log(tmp: Path, *samples: dict[str, Any], compact: bool = False, name: str = "log.json") -> Path:
    """A ``.json`` log: indented as Inspect writes it, or compact (the general scanner's case)."""
    doc = {**HEADER, "samples": list(samples), "reductions": []}
    path = tmp / name
    path.write_bytes(orjson.dumps(doc) if compact else orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


def rows(s: Any) -> list[tuple[str, str, str, str, str]]:
    return [(e.kind, e.type, e.tool, e.target, e.status) for e in s.events()]
