"""Journaling overhead per tool call: the agent loop vs the same edits with journaling off.

Both sides make the same N ``replace_symbol`` edits with the same durable write (temp file, fsync,
rename, directory fsync) and the same post-hash check. The journaled side adds what the harness
does per call: two blobs, an fsynced intent, a commit record. Prints the ratio (journaled /
bare) measured in this run on this disk, plus per-call times for context.

    python bench/agent_overhead.py [N]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.actions import parse_action  # noqa: E402
from agent.approvals import approve_all  # noqa: E402
from agent.runs import start_run  # noqa: E402
from agent.tools import apply_file, observe, prepare  # noqa: E402
from journal.fileops import OS  # noqa: E402


def make_files(ws: Path, n: int) -> list[str]:
    ws.mkdir(parents=True)
    names = [f"m{i:04d}.py" for i in range(n)]
    for name in names:
        (ws / name).write_text("from api import getUserById\n\n\ndef h(uid):\n    return getUserById(uid)\n")
    return names


def steps(names: list[str]) -> list[dict[str, object]]:
    return [
        {"tool": "replace_symbol", "args": {"path": n, "old": "getUserById", "new": "fetchUser"}}
        for n in names
    ]


def bare(ws: Path, names: list[str]) -> float:
    actions = [parse_action(s) for s in steps(names)]
    t0 = time.perf_counter()
    for a in actions:
        p = prepare(a, ws)
        assert p.path is not None
        apply_file(p.path, p.post_data, OS)
        assert observe(p.path) == p.post
    return time.perf_counter() - t0


def journaled(ws: Path, names: list[str], run_dir: Path) -> float:
    task = ws.parent / f"{ws.name}.json"
    task.write_text(json.dumps({"title": "bench", "steps": steps(names)}))
    t0 = time.perf_counter()
    result = start_run(task, ws, approver=approve_all, run_dir=run_dir)
    took = time.perf_counter() - t0
    assert result.status == "completed"
    return took


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    tmp = Path(tempfile.mkdtemp(prefix="walkback-bench-"))
    try:
        rounds = []
        for r in range(3):
            names = make_files(tmp / f"bare{r}", n)
            make_files(tmp / f"jour{r}", n)
            b = bare(tmp / f"bare{r}", names)
            j = journaled(tmp / f"jour{r}", names, tmp / f"run{r}")
            rounds.append((j / b, b, j))
        ratio, b, j = sorted(rounds)[1]
        print(f"{n} replace_symbol calls, median of 3 rounds")
        print(f"  bare (durable write + verify):  {b / n * 1e3:.3f} ms/call")
        print(f"  journaled (blobs, fsynced intent, commit): {j / n * 1e3:.3f} ms/call")
        print(f"  ratio journaled/bare: {ratio:.2f}x  (overhead {(j - b) / n * 1e3:.3f} ms/call)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
