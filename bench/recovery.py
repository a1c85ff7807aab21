"""Recovery time with a checkpoint at 99% of a 100,000-record journal vs a full scan.

Two journals of the same size and records: one has a ``checkpoint`` at 99%, the other the same
record under another type, so recovery must scan it whole. Both end with one unfinished file
intent, so the analysis does its real work (hash the target, find the post image). Prints the
ratio (goal <= 0.05) and, as a baseline measured in the same run, the full analysis against a raw
``orjson.loads`` of every line.

    python bench/recovery.py [--records N] [--repeat K]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from walkback.journal import BlobStore, sha256_bytes
from walkback.journal.record import ZERO_HASH, encode
from walkback.journal.recovery import analyze


def build(run_dir: Path, ws: Path, n: int, *, checkpoint: bool) -> None:
    """Write ``n`` chained v1 records: intent/commit/test.result triples, a checkpoint at 99%."""
    run_dir.mkdir(parents=True)
    blobs = BlobStore(run_dir / "blobs")
    old, new = b"x = 1\n", b"x = 2\n"
    (ws / "last.py").write_bytes(old)
    blobs.put(old)
    blobs.put(new)
    pre, post = sha256_bytes(old), sha256_bytes(new)
    prev = ZERO_HASH
    at = int(n * 0.99)
    with open(run_dir / "journal.jsonl", "wb") as f:

        def put(lsn: int, type: str, **fields: object) -> None:
            nonlocal prev
            rec = {"v": 1, "lsn": lsn, "ts": "2026-01-01T00:00:00.000000Z", "run": "bench", "agent": "main"}
            line, prev = encode({**rec, "type": type, **fields, "prev": prev})
            f.write(line)

        put(0, "run.start", journal_id="0" * 32, task="bench", producer={"name": "bench"}, workspace=str(ws))
        for lsn in range(1, n - 1):
            if lsn == at:
                put(
                    lsn,
                    "checkpoint" if checkpoint else "checkpoinx",
                    git="0" * 40,
                    branch="b",
                    covers_lsn=lsn,
                )
            elif lsn % 3 == 1:
                path = f"src/m{lsn % 97}.py"
                args = {"path": path, "content": "x = 2\n"}
                put(
                    lsn,
                    "intent",
                    tool="write_file",
                    args=args,
                    target=path,
                    effect="fs",
                    step=lsn,
                    pre=pre,
                    post=post,
                )
            elif lsn % 3 == 2:
                put(
                    lsn,
                    "commit",
                    ref=lsn - 1,
                    post=post,
                    verified={"post": True, "check": None, "result": None},
                )
            else:
                put(lsn, "test.result", cmd="pytest -q", exit_code=0, passed=True, output_tail="1 passed")
        args = {"path": "last.py", "content": "x = 2\n"}
        put(
            n - 1,
            "intent",
            tool="write_file",
            args=args,
            target="last.py",
            effect="fs",
            step=n,
            pre=pre,
            post=post,
        )


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wb-bench-recovery-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        build(tmp / "tail", ws, opts.records, checkpoint=True)
        build(tmp / "full", ws, opts.records, checkpoint=False)
        tail_plan, full_plan = analyze(tmp / "tail"), analyze(tmp / "full")
        assert tail_plan.read_from == int(opts.records * 0.99) and full_plan.read_from is None
        assert (
            [f.finding for f in tail_plan.findings]
            == [f.finding for f in full_plan.findings]
            == ["not_applied"]
        )
        lines = (tmp / "full" / "journal.jsonl").read_bytes().splitlines()
        raw = best(lambda: [orjson.loads(x) for x in lines], opts.repeat)
        t_tail = best(lambda: analyze(tmp / "tail"), opts.repeat)
        t_full = best(lambda: analyze(tmp / "full"), opts.repeat)
        size = (tmp / "full" / "journal.jsonl").stat().st_size
        print(f"journal: {opts.records:,} records, {size / 1e6:.1f} MB; checkpoint at 99%")
        print(f"recovery from the checkpoint / full-scan recovery: {t_tail / t_full:.4f}  (goal <= 0.05)")
        print(f"full-scan recovery / raw orjson.loads of every line: {t_full / raw:.2f}")
        print(f"recovery from the checkpoint / raw orjson.loads of every line: {t_tail / raw:.4f}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
