"""Parquet export rate against pyarrow writing the same columns from memory.

A 1,000,000-event session (``journal.testing.synth_journal``: a third model results, a third file
intents, a third commits) is loaded once; then, interleaved for --rounds rounds:

  export   ``walkback export parquet`` of the loaded session (``exporters.tables``: the rows from
           the timeline's columns, model/tokens/hashes from the details of the events that have
           them, then the write);
  pyarrow  ``pyarrow.parquet.write_table`` of the same columns, already in memory as an Arrow
           table.                                   ratio = export rows/s / pyarrow rows/s, goal >= 0.5

Printed beside it: the detail columns alone (the details of the model results and file intents,
two thirds of this session's events) and the rest of the export without them.

Usage: ./run bench export_tables [--records N] [--rounds R]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow.parquet as pq  # noqa: E402
from _common import best_of, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.exporters import exporter  # noqa: E402
from walkback.exporters.tables import arrow_table, detail_columns, rows  # noqa: E402
from walkback.importers import load  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with scratch_dir("wb-bench-tables-") as tmp:
        path = Path(tmp) / "journal.jsonl"
        size = synth_journal(path, a.records)
        session = load(path)
        n = len(session)
        table = arrow_table(rows(session))
        parquet = exporter("parquet")
        print(f"{n:,} events, {size / 1e6:.0f} MB journal; best of {a.rounds} interleaved rounds")
        print(load_note())
        cpu: list[list[float]] = [[], [], []]
        export_t, arrow_t, details_t = best_of(
            a.rounds,
            timed(lambda: parquet.export(session, Path(tmp) / "export.parquet"), cpu[0]),
            timed(lambda: pq.write_table(table, Path(tmp) / "pyarrow.parquet"), cpu[1]),
            timed(lambda: detail_columns(session), cpu[2]),
        )
        ratio = arrow_t / export_t
        ok = report(
            "parquet export rows/s / pyarrow write rows/s",
            ratio,
            ">= 0.5",
            ratio >= 0.5,
            f"(export {n / export_t / 1e3:.0f}k rows/s = {export_t:.2f} s,"
            f" pyarrow {n / arrow_t / 1e3:.0f}k rows/s = {arrow_t:.2f} s)",
        )
        rest = max(export_t - details_t, 1e-9)
        print(f"{'  without the detail columns / pyarrow':<46} {arrow_t / rest:6.2f}   ({rest:.2f} s)")
        print(
            f"{'  the detail columns alone':<46} {'':6}   ({details_t:.2f} s for"
            f" {session.kinds().get('model_result', 0) + session.kinds().get('tool_call', 0):,} details)"
        )
        (ec,), (ac,), _ = cpu
        label = "  CPU time: pyarrow / export"
        print(f"{label:<46} {ac / ec:6.2f}   (export {ec:.2f} s, pyarrow {ac:.2f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
