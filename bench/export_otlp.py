"""OTLP/JSON export time against the time to load the same session.

A 1,000,000-event session (``journal.testing.synth_journal``) is, interleaved for --rounds rounds:

  load    read as a timeline (``importers.load``: parse every line, build the columns);
  export  written as OTLP/JSON (``walkback export otlp -o``) from the loaded session: a span per
          tool call and model result with their details, the agent's span, streamed to the file.
                                                          ratio = export / load time (a figure)

Usage: ./run bench export_otlp [--records N] [--rounds R]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, load_note, scratch_dir, timed  # noqa: E402
from walkback.exporters import exporter  # noqa: E402
from walkback.importers import load  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with scratch_dir("wb-bench-otlp-") as tmp:
        path = Path(tmp) / "journal.jsonl"
        out = Path(tmp) / "trace.json"
        size = synth_journal(path, a.records)
        session = load(path)
        otlp = exporter("otlp")
        print(f"{len(session):,} events, {size / 1e6:.0f} MB journal; best of {a.rounds} interleaved rounds")
        print(load_note())
        cpu: list[list[float]] = [[], []]
        load_t, export_t = best_of(
            a.rounds,
            timed(lambda: load(path), cpu[0]),
            timed(lambda: otlp.export(session, out), cpu[1]),
            settle=True,
        )
        spans = out.read_bytes().count(b'"spanId"')
        print(
            f"{'OTLP/JSON export / load of the same session':<46} {export_t / load_t:6.2f}   "
            f"(load {load_t:.2f} s, export {export_t:.2f} s: {spans:,} spans,"
            f" {out.stat().st_size / 1e6:.0f} MB)"
        )
        (lc,), (ec,) = cpu
        print(f"{'  CPU time: export / load':<46} {ec / lc:6.2f}   (load {lc:.2f} s, export {ec:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
