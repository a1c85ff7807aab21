"""The tabular and OTLP exports of a 1,000,000-event session, each against its baseline.

The session (``journal.testing.synth_journal``: a third model results, a third file intents, a
third commits) is loaded once; then each comparison runs interleaved for --rounds rounds.

(1) Parquet: ``walkback export parquet`` of the loaded session (``exporters.tables``: the columns
    from the timeline's arrays and the measures the importer recorded, then the write, fsynced)
    vs ``pyarrow.parquet.write_table`` of the same columns, already in memory as an Arrow table.
                                             ratio = export rows/s / pyarrow rows/s, goal >= 0.5
    Printed beside it: the share of the export spent building the columns, and what measuring the
    models, tokens and hashes from the events' details costs instead (what an export of a session
    whose importer does not record measures pays: two thirds of this session's events).
    Printed after it: what recording the measures costs the import (``load(measure=True)``, what
    ``walkback export`` does, vs ``load``, what the viewer does).
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
from walkback.exporters.tables.columns import columns  # noqa: E402
from walkback.exporters.tables.write import arrow_table  # noqa: E402
from walkback.importers import load  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402
from walkback.timeline.facts import measures  # noqa: E402
from walkback.timeline.session import Session  # noqa: E402


def parquet(session: Session, tmp: Path, rounds: int) -> bool:
    n = len(session)
    table = arrow_table(columns(session))
    unmeasured = session.copy()
    unmeasured.measures = None
    cpu: list[list[float]] = [[], [], [], []]
    export_t, arrow_t, columns_t, details_t = best_of(
        rounds,
        timed(lambda: exporter("parquet").export(session, tmp / "export.parquet"), cpu[0]),
        timed(lambda: pq.write_table(table, tmp / "pyarrow.parquet"), cpu[1]),
        timed(lambda: columns(session), cpu[2]),
        timed(lambda: measures(unmeasured), cpu[3]),
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
    print(f"{'  of which building the columns':<46} {columns_t / export_t:6.0%}   ({columns_t:.2f} s)")
    count = len(measures(session))
    print(
        f"{'  measuring the details instead / the export':<46} {details_t / export_t:6.2f}"
        f"   ({details_t:.2f} s for {count:,} details, {details_t / max(count, 1) * 1e6:.1f} us each)"
    )
    (ec,), (ac,), _, _ = cpu
    label = "  CPU time: pyarrow / export"
    print(f"{label:<46} {ac / ec:6.2f}   (export {ec:.2f} s, pyarrow {ac:.2f} s)")
    return ok


def measuring(path: Path, rounds: int) -> None:
    plain_t, measured_t = best_of(
        rounds, timed(lambda: load(path), []), timed(lambda: load(path, measure=True), [])
    )
    print(
        f"{'  import with measures / without':<46} {measured_t / plain_t:6.2f}   (load {plain_t:.2f} s,"
        f" with measures {measured_t:.2f} s)"
    )


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
        session = load(path, measure=True)
        print(f"{len(session):,} events, {size / 1e6:.0f} MB journal; best of {a.rounds} interleaved rounds")
        print(load_note())
        ok = parquet(session, Path(tmp), a.rounds)
        measuring(path, a.rounds)
        otlp(session, path, Path(tmp), a.rounds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
