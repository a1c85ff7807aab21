"""Writer cost against raw syscalls on the same disk, in the same run.

(1) fsync per record: JournalWriter appending intents (each fdatasynced before append returns)
    vs os.write + os.fdatasync of the same bytes into a second journal file in the same
    directory. The two sides alternate record by record (which goes first alternates too), so
    both see the same disk at the same moment: a virtual disk's fsync latency drifts by a factor
    of several within seconds.                 ratio = median raw / median writer, goal >= 0.9.
(2) group commit: JournalWriter appending model results with the default group-commit interval
    vs the same writer with fsync switched off.         ratio = no-fsync / group time, goal >= 0.8.
    The runs alternate for --rounds rounds, each side keeps its best time, and dirty pages are
    flushed before every run. (Raw os.write of the same bytes is printed for scale.)

Usage: ./run bench journal_write [--records N] [--group-records N] [--rounds R]
Set BENCH_DIR to put the files on another disk (default: the system temp dir).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Side, best_of, report, scratch_dir  # noqa: E402
from walkback.journal import FileOps, JournalWriter  # noqa: E402

ARGS = {"path": "src/api/users.ts", "old": "getUserById", "new": "fetchUser"}


class NoSync(FileOps):
    """Real writes, no fsync: the baseline that isolates what group commit's syncs cost."""

    def fdatasync(self, fd: int) -> None:
        pass

    def fsync(self, fd: int) -> None:
        pass


def append_one(append: Callable[..., int], typ: str, i: int) -> None:
    if typ == "intent":
        append(
            "intent",
            tool="replace_symbol",
            args=ARGS,
            target=ARGS["path"],
            effect="fs",
            step=i,
            pre="sha256:" + "a" * 64,
            post="sha256:" + "b" * 64,
        )
    else:
        append("model.result", model="m", output="next: edit users.ts", usage={"input_tokens": 900 + i})


def paired_fsync(root: Path, n: int, lines: list[bytes]) -> tuple[list[float], list[float]]:
    """Per-record seconds of (writer appends of intents, raw write+fdatasync of ``lines``)."""
    w = JournalWriter.create(root / "paired", task="bench")
    fd = os.open(root / "paired" / "raw.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, w.path.read_bytes())
    os.fdatasync(fd)
    writer_t: list[float] = []
    raw_t: list[float] = []
    perf = time.perf_counter
    try:
        for i in range(n):
            for side in (0, 1) if i % 2 else (1, 0):
                t = perf()
                if side == 0:
                    append_one(w.append, "intent", i)
                    writer_t.append(perf() - t)
                else:
                    os.write(fd, lines[i])
                    os.fdatasync(fd)
                    raw_t.append(perf() - t)
    finally:
        os.close(fd)
        w.close()
    return writer_t, raw_t


def writer_side(root: Path, n: int, typ: str, ops: FileOps, name: str) -> Side:
    """Create a journal in a fresh directory, then time ``n`` appends and the final close."""
    counter = itertools.count()

    def side() -> float:
        w = JournalWriter.create(root / f"{name}-{next(counter)}", task="bench", ops=ops)
        t = time.perf_counter()
        for i in range(n):
            append_one(w.append, typ, i)
        w.close()
        return time.perf_counter() - t

    return side


def raw_side(root: Path, lines: list[bytes]) -> Side:
    """os.write of ``lines`` (no fsync) into a fresh file in a fresh directory."""
    counter = itertools.count()

    def side() -> float:
        d = root / f"raw-{next(counter)}"
        d.mkdir()
        fd = os.open(d / "journal.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            t = time.perf_counter()
            for line in lines:
                os.write(fd, line)
            return time.perf_counter() - t
        finally:
            os.close(fd)

    return side


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=2000, help="fsynced records per side (default 2000)")
    ap.add_argument(
        "--group-records", type=int, default=100_000, help="group-commit records (default 100000)"
    )
    ap.add_argument("--rounds", type=int, default=4, help="group-commit rounds (default 4)")
    a = ap.parse_args()
    ok = True
    with scratch_dir("wb-bench-write-") as tmp:
        d = Path(tmp)
        print(f"scratch dir {d}")
        n = a.records
        writer_side(d, n, "intent", NoSync(), "isample")()
        lines = (d / "isample-0" / "journal.jsonl").read_bytes().splitlines(keepends=True)[1:]
        writer_t, raw_t = paired_fsync(d, n, lines)
        wm, rm = statistics.median(writer_t), statistics.median(raw_t)
        ok &= report(
            "fsync per record: raw write+fdatasync / writer",
            rm / wm,
            ">= 0.9",
            rm / wm >= 0.9,
            f"({n} pairs, median us per record: writer {wm * 1e6:.0f}, raw {rm * 1e6:.0f};"
            f" means {statistics.fmean(writer_t) * 1e6:.0f} / {statistics.fmean(raw_t) * 1e6:.0f})",
        )
        g = a.group_records
        writer_side(d, g, "model.result", NoSync(), "sample")()
        glines = (d / "sample-0" / "journal.jsonl").read_bytes().splitlines(keepends=True)[1:]
        group_t, nosync_t, raw_nosync_t = best_of(
            a.rounds,
            writer_side(d, g, "model.result", FileOps(), "group"),
            writer_side(d, g, "model.result", NoSync(), "nosync"),
            raw_side(d, glines),
            settle=True,
        )
        ok &= report(
            "group commit: writer without fsync / writer",
            nosync_t / group_t,
            ">= 0.8",
            nosync_t / group_t >= 0.8,
            f"({g} records, best of {a.rounds}: group {group_t / g * 1e6:.1f} us,"
            f" no fsync {nosync_t / g * 1e6:.1f} us per record)",
        )
        print(
            f"{'  for scale: raw os.write of the same bytes':<46} {raw_nosync_t / g * 1e6:6.2f} us per record"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
