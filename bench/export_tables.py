"""The tabular and OTLP exports of a 1,000,000-event session, each against its baseline.

The session (``journal.testing.synth_journal``: a third model results, a third file intents, a
third commits) is loaded once; then each comparison runs interleaved for --rounds rounds.

(1) Parquet: ``walkback export parquet`` of the loaded session (``exporters.tables``: the rows
    from the timeline's columns, model/tokens/hashes from the details of the events that have
    them, then the write) vs ``pyarrow.parquet.write_table`` of the same columns, already in
    memory as an Arrow table.                ratio = export rows/s / pyarrow rows/s, goal >= 0.5
    Printed beside it: the share of the export spent building the detail columns (the details of
    the model results and file intents, two thirds of this session's events).
(2) OTLP/JSON: ``walkback export otlp -o`` of the loaded session vs loading the same session
    (``importers.load``: parse every line, build the columns).    ratio = export / load (a figure)

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
from walkback.exporters.tables.columns import detail_columns, rows  # noqa: E402
from walkback.exporters.tables.write import arrow_table  # noqa: E402
from walkback.importers import load  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402
from walkback.timeline.session import Session  # noqa: E402


def parquet(session: Session, tmp: Path, rounds: int) -> bool:
    n = len(session)
    table = arrow_table(rows(session))
    cpu: list[list[float]] = [[], [], []]
    export_t, arrow_t, details_t = best_of(
        rounds,
        timed(lambda: exporter("parquet").export(session, tmp / "export.parquet"), cpu[0]),
        timed(lambda: pq.write_table(table, tmp / "pyarrow.parquet"), cpu[1]),
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
    kinds = session.kinds()
    count = kinds.get("model_result", 0) + kinds.get("tool_call", 0)
    print(
        f"{'  of which the detail columns':<46} {details_t / export_t:6.0%}   ({details_t:.2f} s for"
        f" {count:,} details, {details_t / max(count, 1) * 1e6:.1f} us each)"
    )
    (ec,), (ac,), _ = cpu
    label = "  CPU time: pyarrow / export"
    print(f"{label:<46} {ac / ec:6.2f}   (export {ec:.2f} s, pyarrow {ac:.2f} s)")
    return ok


def otlp(session: Session, path: Path, tmp: Path, rounds: int) -> None:
    out = tmp / "trace.json"
    cpu: list[list[float]] = [[], []]
    load_t, export_t = best_of(
        rounds,
        timed(lambda: load(path), cpu[0]),
        timed(lambda: exporter("otlp").export(session, out), cpu[1]),
        settle=True,
    )
    spans = out.read_bytes().count(b'"spanId"')
    print(
        f"{'OTLP/JSON export / load of the same session':<46} {export_t / load_t:6.2f}   "
        f"(load {load_t:.2f} s, export {export_t:.2f} s: {spans:,} spans, {out.stat().st_size / 1e6:.0f} MB)"
    )
    (lc,), (ec,) = cpu
    print(f"{'  CPU time: export / load':<46} {ec / lc:6.2f}   (load {lc:.2f} s, export {ec:.2f} s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with scratch_dir("wb-bench-exports-") as tmp:
        path = Path(tmp) / "journal.jsonl"
        size = synth_journal(path, a.records)
        session = load(path)
        print(f"{len(session):,} events, {size / 1e6:.0f} MB journal; best of {a.rounds} interleaved rounds")
        print(load_note())
        ok = parquet(session, Path(tmp), a.rounds)
        otlp(session, path, Path(tmp), a.rounds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
