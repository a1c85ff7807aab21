"""Importing large Copilot CLI, OpenHands, SWE-agent, Cline and OTLP sessions against raw parsing
of the same bytes, and memory against their size.

For each format its largest corpus file is scaled to about --mb megabytes by repeating its body with
fresh ids (so every call still pairs with its own result and every response counts once):
Copilot's events.jsonl line by line; OpenHands' V0 trajectory and mini-swe-agent's trajectory,
single JSON documents, by repeating their events / messages inside the one document. The corpus
has no GenAI trace: the OTLP one is bench/import_inspect's, a document of GenAI spans one a line.
The corpus has no Cline task either: tests/importers' task folder (a read, two edits, a command,
an approval) is repeated in its two JSON files, one message a copy at a time, times and history
indices moved on, as Cline writes them (unindented arrays).

(1) full import (``importers.load``: parsed, mapped, paired, into the timeline) vs raw
    ``orjson.loads`` of the same bytes (every line for JSON lines, the document for the others,
    each JSON file of a Cline task folder).
                                                              ratio = import / raw, goal <= 3.0.
(2) peak RSS of a fresh process importing it vs the file's size.       goal <= 1.5.

Usage: ./run bench import_documents [--mb N] [--rounds R]
       [--only copilot-cli|openhands|mini-swe-agent|cline|otel]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, load_note, report, report_peak_rss, scratch_dir, timed  # noqa: E402
from import_inspect import genai_trace  # noqa: E402
from walkback.importers import load  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CLINE_TASK = Path(__file__).resolve().parents[1] / "tests" / "importers" / "test_cline" / "1733145600000"


def largest(folder: str, pattern: str) -> Path:
    return max((CORPUS / folder).rglob(pattern), key=lambda p: p.stat().st_size)


def fresh(data: bytes, copy: int, prefixes: tuple[bytes, ...]) -> bytes:
    """``data`` with every id that starts with one of ``prefixes`` made this copy's own."""
    tag = b"c" + str(copy).encode() + b"_"
    for p in prefixes:
        data = data.replace(b'"' + p, b'"' + tag + p)
    return data


def copilot(out: Path, target: int) -> int:
    """Copilot events.jsonl: the lines after session.start repeated, call and message ids fresh."""
    lines = [line for line in largest("copilot-cli", "*.jsonl").read_bytes().splitlines() if line.strip()]
    head, body = lines[0], [line for line in lines[1:] if b'"session.shutdown"' not in line]
    ids = [orjson.loads(line)["data"].get("messageId", "") for line in body]
    prefixes = (b"toolu_", *(m.encode()[:8] for m in ids if m))
    size, n, copy = len(head) + 1, 1, 0
    with open(out, "wb") as f:
        f.write(head + b"\n")
        while size < target:
            for line in body:
                line = fresh(line, copy, prefixes)
                f.write(line + b"\n")
                size += len(line) + 1
                n += 1
            copy += 1
    return n


def _document(out: Path, head: bytes, items: Iterator[bytes], tail: bytes) -> int:
    """Write ``head``, the items (indented as the tools write them), ``tail``; returns the items."""
    n = 0
    with open(out, "wb") as f:
        f.write(head)
        for k, item in enumerate(items):
            f.write((b",\n" if k else b"\n") + item)
            n += 1
        f.write(tail)
    return n


def _indented(value: Any, depth: int) -> bytes:
    pad = b"\n" + b"  " * depth
    return b"  " * depth + orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", pad)


def openhands(out: Path, target: int) -> int:
    """An OpenHands V0 trajectory: its events repeated with fresh ids, causes and response ids."""
    events = orjson.loads(largest("openhands/v0-trajectories", "*.json").read_bytes())
    step = max(e["id"] for e in events) + 1

    def items() -> Iterator[bytes]:
        size, copy = 0, 0
        while size < target:
            for e in events:
                e = dict(e, id=e["id"] + copy * step)
                if "cause" in e:
                    e["cause"] += copy * step
                item = fresh(_indented(e, 1), copy, (b"chatcmpl-", b"toolu_"))
                size += len(item) + 2
                yield item
            copy += 1

    return _document(out, b"[", items(), b"\n]\n")


def mini_swe_agent(out: Path, target: int) -> int:
    """A mini-swe-agent trajectory: its assistant/tool messages repeated with fresh call ids."""
    doc = orjson.loads(largest("swe-agent", "*.traj.json").read_bytes())
    messages = doc["messages"]
    first, body, last = messages[:2], messages[2:-1], messages[-1]
    info = _indented(doc["info"], 1)

    def items() -> Iterator[bytes]:
        for m in first:
            yield _indented(m, 2)
        size, copy = 0, 0
        while size < target:
            for m in body:
                item = fresh(_indented(m, 2), copy, (b"call_",))
                size += len(item) + 2
                yield item
            copy += 1
        yield _indented(last, 2)

    head = b'{\n  "info": ' + info[2:] + b',\n  "messages": ['
    tail = b'\n  ],\n  "trajectory_format": "mini-swe-agent-1.1",\n  "instance_id": "bench"\n}\n'
    return _document(out, head, items(), tail)


def cline(out: Path, target: int) -> int:
    """A Cline task folder: its UI messages and API history after the task repeated, each copy
    later in time, its ``conversationHistoryIndex`` values following on."""
    out.mkdir()
    ui = orjson.loads((CLINE_TASK / "ui_messages.json").read_bytes())
    api = orjson.loads((CLINE_TASK / "api_conversation_history.json").read_bytes())
    span = ui[-1]["ts"] - ui[0]["ts"] + 1000
    step = len(orjson.dumps(ui[1:])) + len(orjson.dumps(api[1:]))
    ui_out, api_out, size, copy = ui[:1], api[:1], 0, 0
    while size < target:
        for m in ui[1:]:
            m = dict(m, ts=m["ts"] + copy * span)
            if m.get("conversationHistoryIndex", -1) >= 0:
                m["conversationHistoryIndex"] += copy * (len(api) - 1)
            ui_out.append(m)
        api_out.extend(api[1:])
        size += step
        copy += 1
    (out / "ui_messages.json").write_bytes(orjson.dumps(ui_out))
    (out / "api_conversation_history.json").write_bytes(orjson.dumps(api_out))
    (out / "task_metadata.json").write_bytes((CLINE_TASK / "task_metadata.json").read_bytes())
    return len(ui_out) + len(api_out)


def raw_folder(path: Path) -> None:
    for f in sorted(path.glob("*.json")):
        orjson.loads(f.read_bytes())


def otel(out: Path, target: int) -> int:
    """An OTLP/JSON export of GenAI agent runs (invoke_agent > chat, execute_tool) as one document."""
    genai_trace(out.parent, target // 1_000_000).rename(out)
    return out.read_bytes().count(b'"spanId"')


def raw_lines(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb") as f:
        for line in f:
            loads(line)


def raw_document(path: Path) -> None:
    orjson.loads(path.read_bytes())


FORMATS: dict[str, tuple[str, Callable[[Path, int], int], Callable[[Path], None]]] = {
    "copilot-cli": ("events.jsonl", copilot, raw_lines),
    "openhands": ("trajectory.json", openhands, raw_document),
    "mini-swe-agent": ("bench.traj.json", mini_swe_agent, raw_document),
    "cline": ("1733145600000", cline, raw_folder),
    "otel": ("trace.json", otel, raw_document),
}


def bench(name: str, megabytes: int, rounds: int) -> bool:
    file_name, scale, raw = FORMATS[name]
    ok = True
    with scratch_dir(f"wb-bench-{name}-") as tmp:
        path = Path(tmp) / file_name
        records = scale(path, megabytes * 1_000_000)
        size = sum(f.stat().st_size for f in path.glob("*")) if path.is_dir() else path.stat().st_size
        s = load(path)
        assert s.format == name, s.format
        events = len(s)
        del s
        print(f"\n{name}: {path.name} scaled to {size / 1e6:.0f} MB: {records:,} records, {events:,} events")
        cpu: list[list[float]] = [[], []]
        raw_t, imp_t = best_of(rounds, timed(lambda: raw(path), cpu[0]), timed(lambda: load(path), cpu[1]))
        (raw_c,), (imp_c,) = cpu
        ok &= report(
            "full import / raw orjson.loads",
            imp_t / raw_t,
            "<= 3.0",
            imp_t / raw_t <= 3.0,
            f"(raw {raw_t:.2f} s, import {imp_t:.2f} s; CPU ratio {imp_c / raw_c:.2f})",
        )
        ok &= report_peak_rss(path, size, events, 1.5)[0]
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=sorted(FORMATS))
    a = ap.parse_args()
    print(f"best of {a.rounds} interleaved rounds; {load_note()}")
    ok = True
    for name in [a.only] if a.only else FORMATS:
        ok &= bench(name, a.mb, a.rounds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
