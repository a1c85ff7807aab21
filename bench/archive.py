"""The archive: indexing against reading the same sessions with the importers alone, its size
against the logs', search latency, re-indexing one grown session, blame of a much-edited file.

The corpus is scaled to --sessions sessions of about --mb megabytes in all: its JSON-lines
sessions (Claude Code, Codex, Gemini CLI, Copilot CLI) are copied, each copy with fresh ids and its
records repeated up to its share of the bytes; its other sessions are copied as they are.

(1) ``walkback index`` of the folder (importers + typed details + SQLite FTS5) vs
    ``importers.load`` of every session.                          ratio = index / load, goal <= 1.5
(2) archive file size vs the logs' bytes.                          goal <= 0.5
(3) search p95 over 200 queries (words, phrases, prefixes, AND/NOT, filters).   goal < 50 ms
(4) re-index after one session grew by 100 records.                goal < 1 s
(5) blame of a 2,000-line file with 500 recorded edits.            goal < 1 s

Usage: ./run bench archive [--sessions N] [--mb MB]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "archive"))

from _common import load_note, report, scratch_dir  # noqa: E402
from archive_helpers import prompt, tool, transcript  # noqa: E402
from import_claude_code import fresh  # noqa: E402
from walkback.importers import detect, load  # noqa: E402
from walkback.importers.archive.blame import blame  # noqa: E402
from walkback.importers.archive.index import index  # noqa: E402
from walkback.importers.archive.store import Archive, Filters  # noqa: E402
from walkback.importers.folders import discover  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
LINES = ("claude-code", "codex", "gemini-cli", "copilot-cli")
"""Formats whose sessions are JSON lines (scaled by repeating their records)."""


def build(folder: Path, sessions: int, megabytes: int) -> tuple[list[Path], int]:
    """The scaled corpus; returns its session paths and its bytes."""
    found = [p for p in discover([CORPUS], detect) if "#" not in p.name and p.is_file()]
    lines = [p for p in found if p.suffix == ".jsonl" and detect(p).name in LINES]
    others = [p for p in found if p not in lines]
    share = megabytes * 1_000_000 // sessions
    out: list[Path] = []
    size = 0
    for n in range(sessions):
        src = lines[n % len(lines)] if n % 10 else others[(n // 10) % len(others)]
        dest = folder / f"{n:05d}" / src.name
        dest.parent.mkdir(parents=True)
        data = src.read_bytes()
        if src in lines:
            block, body, copy = b"", data if data.endswith(b"\n") else data + b"\n", 0
            while len(block) < share:
                block += fresh(body, n * 1000 + copy)
                copy += 1
            data = block
        dest.write_bytes(data)
        size += len(data)
        out.append(dest)
    return out, size


def queries(archive: Archive, n: int) -> list[tuple[str, Filters]]:
    """Words of the indexed text, alone, as phrases, prefixes, with AND/NOT and with filters."""
    words = [
        w
        for (text,) in archive.rows("SELECT text FROM events WHERE length(text) > 40 LIMIT 2000")
        for w in text.split()
        if w.isalpha() and len(w) > 3
    ]
    rnd = random.Random(7)
    out: list[tuple[str, Filters]] = []
    for i in range(n):
        a, b = rnd.choice(words), rnd.choice(words)
        out.append(
            [
                (a, Filters()),
                (f'"{a} {b}"', Filters()),
                (a[:3] + "*", Filters()),
                (f"{a} AND {b}", Filters()),
                (f"{a} NOT {b}", Filters()),
                (a, Filters(agent="codex")),
                (a, Filters(tool="Bash")),
                (a, Filters(since=1.7e9)),
            ][i % 8]
        )
    return out


def edited_file(folder: Path, lines: int = 2000, edits: int = 500) -> Path:
    """A file written once and edited ``edits`` times, by sessions of 50 edits each."""
    ws = folder / "ws"
    ws.mkdir()
    target = ws / "big.py"
    text = [f"value_{i} = compute({i})  # original line {i}" for i in range(lines)]
    sessions = folder / "edits"
    first = "\n".join(text) + "\n"
    calls = [
        prompt("w", str(ws), "2026-11-01T00:00:00Z", "write it"),
        tool(
            "w", str(ws), "2026-11-01T00:00:01Z", "w0", "Write", {"file_path": str(target), "content": first}
        ),
    ]
    transcript(sessions / "write.jsonl", calls)
    rnd = random.Random(3)
    for s in range(edits // 50):
        calls = [prompt(f"e{s}", str(ws), f"2026-11-02T{s:02d}:00:00Z", "edit it")]
        for k in range(50):
            i = rnd.randrange(lines)
            new = f"value_{i} = compute({i}) * {s * 50 + k}  # edit {s * 50 + k}"
            args = {"file_path": str(target), "old_string": text[i], "new_string": new}
            text[i] = new
            calls.append(tool(f"e{s}", str(ws), f"2026-11-02T{s:02d}:{k:02d}:00Z", f"e{s}-{k}", "Edit", args))
        transcript(sessions / f"edit-{s:02d}.jsonl", calls)
    target.write_text("\n".join(text) + "\n")
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--mb", type=int, default=2_000)
    args = ap.parse_args()
    print(load_note())
    with scratch_dir("wb-bench-archive-") as tmp:
        folder = Path(tmp)
        paths, size = build(folder / "logs", args.sessions, args.mb)
        print(f"corpus scaled to {len(paths):,} session files, {size / 1e6:,.0f} MB")

        t = time.perf_counter()
        events = sum(len(load(p)) for p in discover([folder / "logs"], detect))
        alone = time.perf_counter() - t
        db = folder / "archive.sqlite"
        archive = Archive.open(str(db))
        t = time.perf_counter()
        done = index(archive, [folder / "logs"])
        took = time.perf_counter() - t
        print(f"  importers alone {alone:.1f} s ({events:,} events), index {took:.1f} s")
        print(f"  {len(done.indexed):,} sessions indexed, {len(done.failed)} skipped")
        report("index vs importers alone", took / alone, "<= 1.5", took / alone <= 1.5)
        stored = sum(p.stat().st_size for p in folder.glob("archive.sqlite*"))
        report(
            "archive size vs logs", stored / size, "<= 0.5", stored / size <= 0.5, f"{stored / 1e6:,.0f} MB"
        )

        times = []
        for q, f in queries(archive, 200):
            t = time.perf_counter()
            archive.search(q, f)
            times.append(time.perf_counter() - t)
        p95 = statistics.quantiles(times, n=20)[-1] * 1e3
        report("search p95 (ms)", p95, "< 50", p95 < 50, f"median {statistics.median(times) * 1e3:.1f} ms")

        grown = next(p for p in paths if p.suffix == ".jsonl" and detect(p).name == "claude-code")
        body = grown.read_bytes().splitlines(keepends=True)[:100]
        with open(grown, "ab") as f:
            f.write(fresh(b"".join(body), 999_999))
        t = time.perf_counter()
        again = index(archive, [folder / "logs"])
        regrow = time.perf_counter() - t
        report("re-index after one session grew (s)", regrow, "< 1", regrow < 1 and len(again.indexed) == 1)

        target = edited_file(folder)
        index(archive, [folder / "edits"])
        t = time.perf_counter()
        ranges = blame(archive, target)
        took = time.perf_counter() - t
        owned = sum(r.last - r.first + 1 for r in ranges if r.change is not None)
        report("blame 2,000 lines, 500 edits (s)", took, "< 1", took < 1, f"{owned} lines put down to a step")


if __name__ == "__main__":
    main()
