"""Reading cost against raw parsing of the same lines, and memory against the file's size.

(1) read + chain verify of a 1,000,000-record v1 journal (``journal.scan``, what ``walkback check``
    does: parse every line, check its hash, its ``prev`` and its lsn) vs ``orjson.loads`` of each
    line of the same file.                                   ratio = scan / raw time, goal <= 2.0.
    Printed beside it: the same read yielding every record (``Scanner.fields``, what the journal
    importer iterates), the same scan without the second-core hash worker (``journal.hashcheck``), and CPU
    times (worker included), which a machine busy with other work disturbs less than wall time.
(2) peak RSS of a fresh process loading the journal as a timeline (``importers.load``) vs the
    file's size.                                          ratio = peak RSS / bytes, goal <= 2.0.

The time sides alternate for --rounds rounds and each keeps its best time; the freshly written
file is flushed to disk first (os.sync), so no side pays for its write-back.

Usage: ./run bench journal_read [--records N] [--rounds R]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, child_peak_rss, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.journal import Scanner, hashcheck, scan  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402

LOAD = "\n".join(
    (
        "import sys",
        "from walkback.importers import load",
        "assert len(load(sys.argv[1])) == int(sys.argv[2])",
    )
)
IMPORTS = "import walkback.importers, walkback.timeline, walkback.journal"


def raw_loads(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb") as f:
        for line in f:
            loads(line)


def scanner_records(path: Path) -> None:
    for _ in Scanner(path).fields():
        pass


def scan_one_process(path: Path) -> None:
    """``scan`` with the hash worker off: parse and hash on one core."""
    saved = hashcheck.MIN_BYTES
    hashcheck.MIN_BYTES = 1 << 62
    try:
        scan(path)
    finally:
        hashcheck.MIN_BYTES = saved


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ok = True
    with scratch_dir("wb-bench-read-") as tmp:
        path = Path(tmp) / "journal.jsonl"
        size = synth_journal(path, a.records)
        print(f"{a.records:,} records, {size / 1e6:.0f} MB; best of {a.rounds} interleaved rounds")
        assert scan(path).intact
        print(load_note())
        cpu: list[list[float]] = [[], [], [], []]
        raw_t, scan_t, iter_t, one_t = best_of(
            a.rounds,
            timed(lambda: raw_loads(path), cpu[0]),
            timed(lambda: scan(path), cpu[1]),
            timed(lambda: scanner_records(path), cpu[2]),
            timed(lambda: scan_one_process(path), cpu[3]),
            settle=True,
        )
        (raw_c,), (scan_c,), (iter_c,), (one_c,) = cpu
        ok &= report(
            "read + chain verify: scan / raw orjson.loads",
            scan_t / raw_t,
            "<= 2.0",
            scan_t / raw_t <= 2.0,
            f"(raw {raw_t:.2f} s, scan {scan_t:.2f} s = {scan_t / a.records * 1e6:.2f} us per record)",
        )
        each = "  each record yielded (Scanner.fields) / raw"
        print(f"{each:<46} {iter_t / raw_t:6.2f}   ({iter_t:.2f} s)")
        print(f"{'  scan on one core (no hash worker) / raw':<46} {one_t / raw_t:6.2f}   ({one_t:.2f} s)")
        print(
            f"{'  CPU time, hash worker included: scan / raw':<46} {scan_c / raw_c:6.2f}   "
            f"(one core {one_c / raw_c:.2f}) "
            f"(Scanner / raw {iter_c / raw_c:.2f}; raw {raw_c:.2f} s, scan {scan_c:.2f} s,"
            f" Scanner {iter_c:.2f} s)"
        )
        peak = child_peak_rss(LOAD, str(path), str(a.records))
        base = child_peak_rss(IMPORTS)
        ok &= report(
            "timeline load: peak RSS / file size",
            peak / size,
            "<= 2.0",
            peak / size <= 2.0,
            f"(peak {peak / 1e6:.0f} MB for {size / 1e6:.0f} MB; the interpreter with its imports alone:"
            f" {base / 1e6:.0f} MB; {(peak - base) / a.records:.0f} bytes per event above it)",
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
