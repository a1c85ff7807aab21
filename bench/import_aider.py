"""Importing a large Aider chat history against parsing its markdown, and memory against its size.

The corpus history (79 runs of the Aider author's own chat history) is scaled to about --mb
megabytes by repeating its runs (from its first ``# aider chat started at`` on); a history is
append-only markdown, so a long-lived repository's file looks like this.

The other formats' goal is "<= 3x raw orjson": the fastest C parser of the format turning the
bytes into its generic structure, with no meaning attached. A chat history is CommonMark, whose
C parser is cmark-gfm (GitHub renders these files with it; the ``bench`` extra installs it):
(1) full import (``importers.load``: every record found, mapped, paired, into the timeline) vs
    cmark-gfm turning the same text into HTML (``cmarkgfm.markdown_to_html``: its only call that
    frees what it parses; the parse is most of it).         ratio = import / raw, goal <= 3.0
    Printed beside it, floors no parser reaches: the import vs reading the bytes in 4 MiB blocks and
    splitting them into lines (``bytes.split``), and vs a Python loop over those lines that looks
    at each line's first byte.
(2) peak RSS of a fresh process importing it vs the file's size (goal <= 1.5), with the footprint of
    a process that only registers the importers (plugins included) printed beside it.

Usage: ./run bench import_aider [--mb N] [--rounds R]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import LOAD, best_of, child_peak_rss, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.importers import load  # noqa: E402

try:
    import cmarkgfm
except ImportError:  # pragma: no cover - the bench extra is missing
    sys.exit("bench/import_aider needs cmarkgfm: pip install -e '.[bench]' (./run installs it)")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "aider"
IMPORTS = "from walkback.importers import importers; importers()"
"""The baseline process: the interpreter with every importer registered (what ``load`` does first)."""
BLOCK = 1 << 22


def scaled(source: Path, out: Path, megabytes: int) -> int:
    """Write ``source``'s runs repeated to about ``megabytes`` MB; returns the number of lines."""
    data = source.read_bytes()
    runs = data[data.index(b"\n# aider chat started at ") :]
    target = megabytes * 1_000_000
    size = 0
    with open(out, "wb") as f:
        while size < target:
            f.write(runs)
            size += len(runs)
    return runs.count(b"\n") * (size // len(runs))


def raw_lines(path: Path) -> None:
    with open(path, "rb") as f:
        carry = b""
        while block := f.read(BLOCK):
            lines = (carry + block).split(b"\n")
            carry = lines.pop()


def commonmark(path: Path) -> None:
    cmarkgfm.markdown_to_html(path.read_text(encoding="utf-8", errors="replace"))


def line_loop(path: Path) -> None:
    with open(path, "rb") as f:
        carry = b""
        while block := f.read(BLOCK):
            lines = (carry + block).split(b"\n")
            carry = lines.pop()
            for line in lines:
                if line[:1] in (b"#", b">"):
                    pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ok = True
    source = next(CORPUS.rglob("*.md"))
    with scratch_dir("wb-bench-aider-") as tmp:
        path = Path(tmp) / ".aider.chat.history.md"
        lines = scaled(source, path, a.mb)
        size = path.stat().st_size
        events = len(load(path))
        print(f"{source.name} scaled to {size / 1e6:.0f} MB: {lines:,} lines, {events:,} events")
        print(f"best of {a.rounds} interleaved rounds; {load_note()}")
        cpu: list[list[float]] = [[], [], [], []]
        md_t, raw_t, loop_t, imp_t = best_of(
            a.rounds,
            timed(lambda: commonmark(path), cpu[0]),
            timed(lambda: raw_lines(path), cpu[1]),
            timed(lambda: line_loop(path), cpu[2]),
            timed(lambda: load(path), cpu[3]),
        )
        (md_c,), (raw_c,), (loop_c,), (imp_c,) = cpu
        ok &= report(
            "full import / cmark-gfm parse (C CommonMark)",
            imp_t / md_t,
            "<= 3.0",
            imp_t / md_t <= 3.0,
            f"(cmark-gfm {md_t:.2f} s, import {imp_t:.2f} s = {imp_t / lines * 1e6:.2f} us per line;"
            f" CPU ratio {imp_c / md_c:.2f})",
        )
        print(
            f"{'  floor: full import / read + split lines':<46} {imp_t / raw_t:6.2f}   (split {raw_t:.2f} s;"
            f" CPU ratio {imp_c / raw_c:.2f})"
        )
        print(
            f"{'  floor: full import / a loop over the lines':<46} {imp_t / loop_t:6.2f}"
            f"   (loop {loop_t:.2f} s; CPU ratio {imp_c / loop_c:.2f})"
        )
        peak = child_peak_rss(LOAD, str(path))
        base = child_peak_rss(IMPORTS)
        ok &= report(
            "peak RSS / file size",
            peak / size,
            "<= 1.5",
            peak / size <= 1.5,
            f"(peak {peak / 1e6:.0f} MB for {size / 1e6:.0f} MB; with the importers registered and nothing"
            f" read: {base / 1e6:.0f} MB; the import's own {(peak - base) / size:.2f} x the file)",
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
