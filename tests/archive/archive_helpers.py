"""Sessions to index: Claude Code transcripts written line by line as Claude Code writes them."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson

_ids = itertools.count(1)


def _line(kind: str, session: str, cwd: str, ts: str, message: dict[str, Any]) -> bytes:
    n = next(_ids)
    record = {
        "type": kind,
        "timestamp": ts,
        "parentUuid": None,
        "isSidechain": False,
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.0",
        "uuid": f"u-{n}",
        "message": message,
    }
    return orjson.dumps(record) + b"\n"


def prompt(session: str, cwd: str, ts: str, text: str) -> bytes:
    return _line("user", session, cwd, ts, {"role": "user", "content": text})


def tool(
    session: str,
    cwd: str,
    ts: str,
    call: str,
    name: str,
    args: dict[str, Any],
    model: str = "claude-sonnet-4-5",
) -> bytes:
    """An assistant turn calling one tool, and its result."""
    use = {"type": "tool_use", "id": call, "name": name, "input": args}
    usage = {"input_tokens": 1000, "output_tokens": 100}
    turn = {"id": f"m-{call}", "role": "assistant", "model": model, "content": [use], "usage": usage}
    done = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]}
    return _line("assistant", session, cwd, ts, turn) + _line("user", session, cwd, ts, done)


def transcript(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return path
