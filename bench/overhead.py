"""Journaling overhead per tool call: the journaled agent loop vs the same tool calls unjournaled.

Both sides make the same mixed file tool calls (``replace_symbol``, ``ensure_line``,
``write_file``, ``delete_file``, in turn) on identical fresh workspaces, each with the same
durable write (temp file, fsync, rename, directory fsync) and the same post-hash check. The
journaled side is the real loop (``agent.runs.start_run`` with the scripted planner): per call it
adds an fsynced intent carrying the pre/post images (inline up to ``journal.images.INLINE_MAX``
bytes, else blobs written before it) and a commit. A run's fixed cost
(header, plan, end; no git here, so no checkpoints) is measured with an empty task and taken out,
so the ratio is per call. Sides interleave and each keeps its best time (``bench/_common.py``);
a counting FileOps shows what each side asks of the disk per call, which is where the ratio comes
from.

    python bench/overhead.py [--calls 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import best_of, scratch_dir  # noqa: E402
from walkback.agent.actions import parse_action  # noqa: E402
from walkback.agent.approvals import approve_all  # noqa: E402
from walkback.agent.runs import start_run  # noqa: E402
from walkback.agent.tools import apply_file, observe, prepare  # noqa: E402
from walkback.journal.fileops import FileOps  # noqa: E402

TOOLS = ("replace_symbol", "ensure_line", "write_file", "delete_file")


class CountingOps(FileOps):
    """Real file operations, counted by kind (the fsyncs are what journaling adds)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def fsync(self, fd: int) -> None:
        self.counts["fsync"] += 1
        super().fsync(fd)

    def fdatasync(self, fd: int) -> None:
        self.counts["fdatasync"] += 1
        super().fdatasync(fd)

    def fsync_dir(self, path: Path) -> None:
        self.counts["dir fsync"] += 1
        super().fsync_dir(path)

    def replace(self, src: Path, dst: Path) -> None:
        self.counts["rename"] += 1
        super().replace(src, dst)

    def write(self, fd: int, data: bytes) -> None:
        self.counts["write"] += 1
        super().write(fd, data)


def steps(n: int) -> list[dict[str, Any]]:
    """``n`` calls, the four file tools in turn, each on its own file."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        tool = TOOLS[i % len(TOOLS)]
        if tool == "replace_symbol":
            args = {"path": f"m{i:04d}.py", "old": "getUserById", "new": "fetchUser"}
        elif tool == "ensure_line":
            args = {"path": f"m{i:04d}.py", "line": "# reviewed"}
        elif tool == "write_file":
            args = {"path": f"new{i:04d}.py", "content": f"VALUE = {i}\n" * 20}
        else:
            args = {"path": f"old{i:04d}.txt"}
        out.append({"tool": tool, "args": args})
    return out


def make_workspace(ws: Path, n: int) -> None:
    ws.mkdir(parents=True)
    body = "from api import getUserById\n\n\ndef handler(uid):\n    return getUserById(uid)\n" * 4
    for i in range(n):  # distinct contents: the blob store must really store each image
        (ws / f"m{i:04d}.py").write_text(f'"""Handler {i}."""\n' + body)
        (ws / f"old{i:04d}.txt").write_text(f"obsolete {i}\n" * 10)


class Bench:
    """Fresh workspaces for every run of every side, made outside the timed part."""

    def __init__(self, root: Path, n: int) -> None:
        self.root, self.n = root, n
        self.ids = itertools.count()
        self.plan = steps(n)
        self.task = root / "task.json"
        self.task.write_text(json.dumps({"title": "bench", "steps": self.plan}))
        self.empty = root / "empty.json"
        self.empty.write_text(json.dumps({"title": "bench (no calls)", "steps": []}))
        self.counts = {"bare": CountingOps(), "journaled": CountingOps()}

    def _fresh(self, n: int) -> Path:
        ws = self.root / f"ws{next(self.ids)}"
        make_workspace(ws, n)
        return ws

    def bare(self) -> float:
        """The calls without a journal: prepare (hashes), durable write, post-hash check."""
        ws, ops = self._fresh(self.n), self.counts["bare"]
        actions = [parse_action(s) for s in self.plan]
        t0 = time.perf_counter()
        for a in actions:
            p = prepare(a, ws)
            assert p.path is not None
            if p.pre != p.post:
                apply_file(p.path, p.post_data, ops, root=ws)
            assert observe(p.path) == p.post
        return time.perf_counter() - t0

    def journaled(
        self, task: Path | None = None, *, n: int | None = None, ops: FileOps | None = None
    ) -> float:
        ws = self._fresh(self.n if n is None else n)
        run_dir = self.root / f"run{next(self.ids)}"
        t0 = time.perf_counter()
        result = start_run(
            task or self.task, ws, approver=approve_all, run_dir=run_dir, ops=ops or self.counts["journaled"]
        )
        took = time.perf_counter() - t0
        assert result.status == "completed", result.status
        return took

    def fixed(self) -> float:
        """A run with no calls: header, plan, end (its cost is the run's, not the calls')."""
        return self.journaled(self.empty, n=0, ops=FileOps())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n = args.calls
    with scratch_dir("walkback-overhead-") as tmp:
        b = Bench(Path(tmp), n)
        print(f"{n} file tool calls ({', '.join(TOOLS)} in turn), best of {args.rounds} interleaved rounds")
        bare, journaled, fixed = best_of(args.rounds, b.bare, b.journaled, b.fixed, settle=True)
    per_bare, per_jour = bare / n, (journaled - fixed) / n
    print(f"  unjournaled (durable write + post-hash check): {per_bare * 1e3:7.3f} ms/call")
    print(f"  journaled (+ images, fsynced intent, commit): {per_jour * 1e3:7.3f} ms/call")
    print(f"  fixed cost of a run (header, plan, end):      {fixed * 1e3:7.3f} ms")
    runs = {"bare": args.rounds, "journaled": args.rounds}
    for side, ops in b.counts.items():
        per = ", ".join(f"{k} {v / (runs[side] * n):.2f}" for k, v in sorted(ops.counts.items()))
        print(f"  {side:<9} per call: {per}")
    print(
        f"ratio journaled/unjournaled per tool call: {per_jour / per_bare:.2f}x "
        f"(overhead {(per_jour - per_bare) * 1e3:.3f} ms/call)"
    )


if __name__ == "__main__":
    main()
