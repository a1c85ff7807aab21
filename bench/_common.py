"""Shared helpers for the benchmarks: timing that resists drift, child peak RSS, ratio lines.

Benchmarks print ratios against a baseline measured in the same run, interleaving the sides
(A B A B ...) and keeping each side's best time, because absolute times on shared machines (and
their virtual disks) drift by a factor of several between seconds.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

Side = Callable[[], float]
"""One side of a comparison: does its work once and returns the seconds that count."""


def timed(fn: Callable[[], object], cpu: list[float] | None = None) -> Side:
    """A side whose whole call counts (wall time); its best CPU time, children included, goes to
    ``cpu[0]`` when given (a fairer measure than wall time on a machine busy with other work)."""

    def side() -> float:
        before = cpu_seconds()
        t = time.perf_counter()
        fn()
        wall = time.perf_counter() - t
        if cpu is not None:
            used = cpu_seconds() - before
            cpu[:] = [min(cpu[0], used) if cpu else used]
        return wall

    return side


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def load_note() -> str:
    """The machine's load, for reading the figures: ratios drift when it exceeds the cores."""
    one, _, _ = os.getloadavg()
    cores = os.cpu_count() or 1
    busy = "  (busy: other work competes for the cores; see the CPU-time ratios)" if one > cores else ""
    return f"load average {one:.1f} on {cores} cores{busy}"


def best_of(rounds: int, *sides: Side, settle: bool = False) -> list[float]:
    """Run each side once per round, interleaved; return each side's best time in seconds.

    The order of the sides alternates between rounds, so that neither always runs first.
    ``settle`` flushes all dirty pages (``os.sync``) before each run, so that no side pays for the
    write-back of data another side left in the page cache. The minimum is the estimate least
    disturbed by a noisy (virtual) disk: noise only ever adds time.
    """
    times: list[list[float]] = [[] for _ in sides]
    order = list(range(len(sides)))
    for r in range(rounds):
        for k in order if r % 2 == 0 else order[::-1]:
            if settle:
                os.sync()
            times[k].append(sides[k]())
    spread = ", ".join(f"{min(t) * 1e3:.0f}..{statistics.median(t) * 1e3:.0f}" for t in times)
    print(f"  (best..median ms per run: {spread})")
    return [min(t) for t in times]


def child_peak_rss(code: str, *args: str) -> int:
    """Peak resident set size in bytes of a fresh Python child running ``code``.

    Read from the child's own ``VmHWM`` at exit, not from ``ru_maxrss``: Linux carries the parent's
    peak into a child's ``ru_maxrss`` across exec, which would blame this process's memory on it.
    """
    report = (
        "\nimport sys as _sys\nwith open('/proc/self/status') as _f:\n"
        "    print('VmHWM', [x.split()[1] for x in _f if x.startswith('VmHWM:')][0], file=_sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code + report, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed with exit code {proc.returncode}: {proc.stderr[-500:]}")
    kib = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("VmHWM ")][-1]
    return int(kib) * 1024


LOAD = (
    "import sys; from walkback.importers import load; s = load(sys.argv[1]); print(len(s), file=sys.stderr)"
)
"""A child that imports the session its argument names (for :func:`child_peak_rss`)."""
IMPORTS = "import walkback.importers, walkback.timeline, walkback.journal"
"""A child with walkback's parts imported and nothing read: the floor under a peak RSS."""


def report_peak_rss(
    path: Path, size: int, events: int, goal: float, of: str = "file size"
) -> tuple[bool, int]:
    """The peak RSS of a fresh process importing ``path`` against ``size``, one report line, and
    that peak (bytes)."""
    peak = child_peak_rss(LOAD, str(path))
    base = child_peak_rss(IMPORTS)
    ok = report(
        f"peak RSS / {of}",
        peak / size,
        f"<= {goal}",
        peak / size <= goal,
        f"(peak {peak / 1e6:.0f} MB for {size / 1e6:.0f} MB; the interpreter with its imports alone:"
        f" {base / 1e6:.0f} MB; {(peak - base) / events:.0f} bytes per event above it)",
    )
    return ok, peak


def scratch_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary directory (``BENCH_DIR`` chooses the disk; default: the system temp dir)."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=os.environ.get("BENCH_DIR"))


def report(name: str, ratio: float, goal: str, ok: bool, detail: str = "") -> bool:
    """Print one ratio line; return whether the goal was met."""
    verdict = "ok" if ok else "MISSED"
    print(f"{name:<46} {ratio:6.2f}   goal {goal:<7} {verdict:<6} {detail}")
    return ok
