"""Crash torture at scale: 1,000 SIGKILLs (by default) of real agent runs, each resumed and checked.

One pass of the every-failpoint sweep and the kills inside recovery (``tests/torture/sweep.py``),
then seeded random kills of the 5-file rename, the 40-file rename and the multi-agent task (whole
process group, sometimes the resumes too) until ``--kills`` SIGKILLs have landed. Every case is
checked against a clean run by ``tests/torture/oracle.py`` (workspace bytes, journal meaning, each
idempotency key acted on once, journals intact, no acknowledged record lost).

Prints the pass count, every failing case with its seed (``--seed S --only-random`` replays the
same draws, scaled to this machine's clean-run times), and, as ratios against the clean runs
measured in the same run, what a crash and its recovery cost in wall time.

    python bench/torture.py [--kills 1000] [--workers N] [--seed 1] [--only-random] [--keep]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "torture"))

from sweep import Seeded, failpoint_cases, recovery_cases  # noqa: E402
from torturekit import SCENARIOS, Case, Lab, Outcome  # noqa: E402

MIX = ("rename5", "rename5", "rename40", "multi", "multi")
"""Scenario of each random case in turn (seeds are drawn per scenario)."""


def cases(seed: int, only_random: bool, labs: dict[str, Lab]) -> itertools.chain[Case]:
    """The sweeps (unless ``only_random``), then random cases from ``seed`` on, forever."""
    fixed: list[Case] = [] if only_random else failpoint_cases() + recovery_cases()
    seeded = (Seeded(MIX[s % len(MIX)], s) for s in itertools.count(seed))
    randoms = (r.case(labs[r.scenario].header_at, labs[r.scenario].golden.seconds) for r in seeded)
    return itertools.chain(fixed, randoms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=1000, help="stop once this many SIGKILLs landed")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--seed", type=int, default=1, help="first random seed")
    ap.add_argument("--only-random", action="store_true", help="skip the failpoint and recovery sweeps")
    ap.add_argument("--keep", action="store_true", help="keep the work directories of passing cases")
    ap.add_argument("--dir", type=Path, help="work directory (default: a new temporary one)")
    args = ap.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="walkback-torture-"))
    t0 = time.monotonic()
    labs = {name: Lab(sc, root / f"lab-{name}") for name, sc in SCENARIOS.items()}
    print("clean runs: " + ", ".join(f"{n} {lab.golden.seconds:.2f}s" for n, lab in labs.items()))
    source = cases(args.seed, args.only_random, labs)
    outcomes: list[Outcome] = []
    kills = 0
    with ThreadPoolExecutor(args.workers) as pool:
        running: set[Future[Outcome]] = set()
        n = 0
        while True:
            while len(running) < args.workers and kills + len(running) < args.kills:
                case = next(source)
                running.add(pool.submit(labs[case.scenario].run, case, root / f"case-{n:05d}"))
                n += 1
            if not running:
                break
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                out = f.result()
                outcomes.append(out)
                kills += out.kills
                if out.ok and not args.keep:
                    shutil.rmtree(out.workdir, ignore_errors=True)
                elif not out.ok:
                    print("FAILED " + out.report(), flush=True)
            if len(outcomes) % 50 == 0:
                print(f"  {len(outcomes)} cases, {kills} kills, {time.monotonic() - t0:.0f}s", flush=True)
    summarize(outcomes, labs, time.monotonic() - t0, root)


def summarize(outcomes: list[Outcome], labs: dict[str, Lab], seconds: float, root: Path) -> None:
    kills = sum(o.kills for o in outcomes)
    failed = [o for o in outcomes if not o.ok]
    good = kills - sum(o.kills for o in failed)
    print(f"\n{len(outcomes)} cases, {kills} SIGKILLs in {seconds:.0f}s ({root})")
    print(
        f"passed: {len(outcomes) - len(failed)}/{len(outcomes)} cases, {good}/{kills} kills recovered exactly"
    )
    early = sum(o.before_header for o in outcomes)
    print(f"  ({early} first kills landed before the journal had a header: resume refused, run restarted)")
    by: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        if o.kills and o.ok:
            by[o.case.scenario].append(o.seconds / labs[o.case.scenario].golden.seconds)
    for sc, ratios in sorted(by.items()):
        ratios.sort()
        print(
            f"  {sc:<9} crashed+resumed / clean wall time: median {ratios[len(ratios) // 2]:.2f}x "
            f"({len(ratios)} cases)"
        )
    seeds = [f"{o.case.seed} ({o.case.scenario})" for o in failed if o.case.seed is not None]
    print("failing seeds: " + (" ".join(seeds) if seeds else "none"))
    print(
        "failing failpoint cases: "
        + ("; ".join(str(o.case) for o in failed if o.case.seed is None) or "none")
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
