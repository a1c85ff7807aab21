"""Importing a large Codex rollout against raw parsing of the same lines, and memory against its size.

The largest Codex rollout of the corpus is scaled to about --mb megabytes: its records after the
session_meta are repeated, each copy with fresh call ids (so every call pairs with its own output),
and its timestamps kept (time order does not matter to the import).

(1) full import (``importers.load``: every line parsed, mapped, paired, into the timeline) vs
    ``orjson.loads`` of every line of the same file.          ratio = import / raw, goal <= 3.0.
(2) peak RSS of a fresh process importing it vs the file's size (printed, with the footprint of
    a process importing the smallest rollout beside it: the interpreter and every library the
    registry's plugins import).

Usage: ./run bench import_codex [--mb N] [--rounds R]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import LOAD, best_of, child_peak_rss, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.importers import load  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "codex"


def largest() -> Path:
    return max(CORPUS.rglob("*.jsonl"), key=lambda p: p.stat().st_size)


def smallest() -> Path:
    return min(CORPUS.rglob("*.jsonl"), key=lambda p: p.stat().st_size)


def scaled(source: Path, out: Path, megabytes: int) -> int:
    """Write ``source`` scaled to about ``megabytes`` MB; returns the number of lines."""
    lines = [line for line in source.read_bytes().splitlines() if line.strip()]
    head, body = lines[0], lines[1:]
    target = megabytes * 1_000_000
    size = len(head) + 1
    n = 1
    with open(out, "wb") as f:
        f.write(head + b"\n")
        copy = 0
        while size < target:
            for line in body:
                # every call id names its own call in this copy; an id is a quoted "call_..." string
                fresh = line.replace(b'"call_', b'"c' + str(copy).encode() + b"_call_")
                f.write(fresh + b"\n")
                size += len(fresh) + 1
                n += 1
            copy += 1
    return n


def raw_loads(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb") as f:
        for line in f:
            loads(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ok = True
    source = largest()
    with scratch_dir("wb-bench-codex-") as tmp:
        path = Path(tmp) / "rollout-2026-05-11T11-26-55-bench.jsonl"
        lines = scaled(source, path, a.mb)
        size = path.stat().st_size
        events = len(load(path))
        print(f"{source.name} scaled to {size / 1e6:.0f} MB: {lines:,} lines, {events:,} events")
        print(f"best of {a.rounds} interleaved rounds; {load_note()}")
        cpu: list[list[float]] = [[], []]
        raw_t, imp_t = best_of(
            a.rounds, timed(lambda: raw_loads(path), cpu[0]), timed(lambda: load(path), cpu[1])
        )
        (raw_c,), (imp_c,) = cpu
        ok &= report(
            "full import / raw orjson.loads",
            imp_t / raw_t,
            "<= 3.0",
            imp_t / raw_t <= 3.0,
            f"(raw {raw_t:.2f} s, import {imp_t:.2f} s = {imp_t / lines * 1e6:.1f} us per line;"
            f" CPU ratio {imp_c / raw_c:.2f})",
        )
        peak = child_peak_rss(LOAD, str(path))
        base = child_peak_rss(LOAD, str(smallest()))  # the interpreter with all the registry imports
        print(
            f"{'peak RSS / file size':<46} {peak / size:6.2f}   (peak {peak / 1e6:.0f} MB for"
            f" {size / 1e6:.0f} MB; importing the smallest rollout: {base / 1e6:.0f} MB;"
            f" {(peak - base) / events:.0f} bytes per event above it)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
