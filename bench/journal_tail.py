"""Picking up new records of a growing journal: a resumed scan costs the new bytes, not the journal.

A follower (a live viewer) keeps the state of its last scan (``Scanner.state``) and reads only
what was appended since (``Scanner(path, resume=state)``), the chain state carried: the new records
are parsed and hash-checked against the last verified one.

(1) the cost of picking up 100 new records at the end of a 1,000,000-record journal vs at the end
    of a 1,000-record one, each resumed from the state its own full scan left.
                                                      ratio = 1M / 1k time, goal <= 1.5.
(2) the same for the viewer's session (``importers.extend``: a copy of the timeline with the new
    events; copying the columns is linear in the events, but a memory copy, not a parse), and a
    full re-read of the 1M session instead.
Printed beside it: each against raw ``orjson.loads`` of the same 100 lines (the baseline), and what
a full re-read of the 1M journal costs instead.

The sides alternate for --rounds rounds and each keeps its best time (bench/_common.py); a side
repeats its pick-up --repeat times, so the timer sees milliseconds, not microseconds.

Usage: ./run bench journal_tail [--big N] [--small N] [--new N] [--rounds R] [--repeat K]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.importers import extend, load  # noqa: E402
from walkback.journal import JournalWriter, Scanner, ScanState, scan  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402
from walkback.timeline.session import Session  # noqa: E402


def grown(path: Path, records: int, new: int) -> tuple[ScanState, list[bytes], Session]:
    """A journal of ``records`` records, the state of its full scan and the session read from it,
    then ``new`` records appended by the real writer; returns the state, the appended lines and the
    session as read before they were."""
    synth_journal(path, records)
    session = load(path)
    scanner = Scanner(path, emit=False)
    for _ in scanner:
        pass
    size = path.stat().st_size
    w = JournalWriter.continue_after(path, scanner.result)
    for i in range(new):
        w.append("model.result", sync=False, model="scripted", output=f"step {i}: edit the next module",
                 usage={"input_tokens": 1200 + i, "output_tokens": 80})  # fmt: skip
    w.close()
    with open(path, "rb") as f:
        f.seek(size)
        lines = f.read().splitlines()
    return scanner.state, lines, session


def pick_up(path: Path, state: ScanState, new: int, repeat: int) -> None:
    for _ in range(repeat):
        s = Scanner(path, resume=state)
        got = sum(1 for _ in s)
        assert got == new and s.result.intact


def extended(session: Session, new: int, repeat: int) -> None:
    for _ in range(repeat):
        s = extend(session)
        assert s is not None and len(s) == len(session) + new


def raw_loads(lines: list[bytes], repeat: int) -> None:
    loads = orjson.loads
    for _ in range(repeat):
        for line in lines:
            loads(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", type=int, default=1_000_000)
    ap.add_argument("--small", type=int, default=1_000)
    ap.add_argument("--new", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=50)
    a = ap.parse_args()
    with scratch_dir("wb-bench-tail-") as tmp:
        small, big = Path(tmp) / "small.jsonl", Path(tmp) / "big.jsonl"
        s_state, s_lines, s_session = grown(small, a.small, a.new)
        b_state, b_lines, b_session = grown(big, a.big, a.new)
        mb = big.stat().st_size / 1e6
        print(f"{a.new} new records after {a.small:,} and after {a.big:,} ({mb:.0f} MB);"
              f" best of {a.rounds} interleaved rounds of {a.repeat} pick-ups")  # fmt: skip
        print(load_note())
        raw_t, small_t, big_t = best_of(
            a.rounds,
            timed(lambda: raw_loads(b_lines, a.repeat)),
            timed(lambda: pick_up(small, s_state, a.new, a.repeat)),
            timed(lambda: pick_up(big, b_state, a.new, a.repeat)),
        )
        (full_t,) = best_of(2, timed(lambda: scan(big)))
        few = max(1, a.repeat // 10)
        s_ext, b_ext = best_of(
            a.rounds,
            timed(lambda: extended(s_session, a.new, few)),
            timed(lambda: extended(b_session, a.new, few)),
        )
        (reload_t,) = best_of(1, timed(lambda: load(big)))
    per = big_t / a.repeat
    ok = report(
        f"pick up {a.new} new records: at {a.big:,} / at {a.small:,}",
        big_t / small_t,
        "<= 1.5",
        big_t / small_t <= 1.5,
        f"({per * 1e3:.3f} ms per pick-up at {a.big:,}, {small_t / a.repeat * 1e3:.3f} ms at {a.small:,})",
    )
    print(f"{f'  at {a.big:,} / raw loads of the new lines':<46} {big_t / raw_t:6.2f}")
    print(f"{f'  at {a.small:,} / raw loads of the new lines':<46} {small_t / raw_t:6.2f}")
    print(f"{'  a full re-read instead / the pick-up':<46} {full_t / per:6.0f}   ({full_t:.2f} s)")
    ext = b_ext / few
    report(
        f"session extended by {a.new}: at {a.big:,} / at {a.small:,}",
        b_ext / s_ext,
        "-",
        True,
        f"({ext * 1e3:.1f} ms at {a.big:,}: the columns' copy; {s_ext / few * 1e3:.2f} ms at {a.small:,})",
    )
    print(f"{'  a full reload of the 1M session / extended':<46} {reload_t / ext:6.0f}   ({reload_t:.2f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
