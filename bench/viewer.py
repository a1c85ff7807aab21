"""Viewer benchmark: journals of 1,000 / 100,000 / 1,000,000 events, printed as ratios.

* first page / raw: time from the viewer's loader thread starting on the journal until its session
  page (with step 1) is served, requested as soon as the store has something to show (the first
  chunks, "loading…", status and integrity pending), vs a plain ``orjson.loads`` of every line of
  the same file (goal <= 0.3); NiceGUI's own start-up, the same for every size, is excluded (the
  store is made first, as ``walkback view`` makes it; it has read nothing);
* full page / raw: the same until the page is served from the whole journal, fully read (no goal;
  also printed against "plain": ``orjson.loads`` plus ``datetime.fromisoformat`` of its ``ts``
  for every line, what the full load may cost);
* step p95 at 1M / at 1k: server-side time to handle one "next step" key (detail, list page,
  timeline mark, URL), measured with NiceGUI's simulated user, best of 3 rounds (goal <= 1.5, and
  under 50 ms);
* peak RSS / file size of the process that served the page (goal <= 1.0).

Each size runs in its own process so peak RSS belongs to that size. Usage:
``./run bench viewer [--sizes 1000,100000,1000000] [--steps 300] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import types
from datetime import UTC, datetime
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROUNDS = 3
MAIN = """
import sys
from nicegui import ui
from walkback.viewer.app import build
build(sys.modules["_walkback_bench"].store, poll=None)
ui.run(reload=False, show=False, show_welcome_message=False)
"""


# -- generating journals ----------------------------------------------------------------------
def source(k: int, version: int) -> bytes:
    body = "".join(f"    value_{i} = compute({i}, {version})\n" for i in range(20 + k % 30))
    return f"def handler_{k}(request):\n{body}    return value_0\n".encode()


def generate(path: Path, n: int) -> None:
    """A v1 journal of ``n`` events: model calls/results and file intents with blobs and commits."""
    from walkback.journal.blobs import BlobStore
    from walkback.journal.record import ZERO_HASH, encode, sha256_bytes

    path.parent.mkdir(parents=True, exist_ok=True)
    store = BlobStore(path.parent / "blobs")
    files, versions = 64, 8
    names = {(k, v): store.put(source(k, v)) for k in range(files) for v in range(versions)}
    prev = ZERO_HASH
    base = {"v": 1, "ts": "", "run": "bench", "agent": "main"}
    t0 = 1_700_000_000.0
    with open(path, "wb") as f:

        def put(rec: dict[str, object]) -> None:
            nonlocal prev
            rec["ts"] = datetime.fromtimestamp(t0 + rec["lsn"] * 0.01, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # type: ignore[operator]
            rec["prev"] = prev
            line, prev = encode(rec)
            f.write(line)

        put(
            {
                **base,
                "lsn": 0,
                "type": "run.start",
                "journal_id": "bench",
                "task": f"bench {n} events",
                "producer": {"name": "walkback", "version": "0.1.0"},
            }
        )
        lsn = 1
        while lsn < n:
            kind = lsn % 4
            step = (lsn - 1) // 4  # model.call, model.result, intent, then the intent's commit
            k, v = step % files, (step // files) % (versions - 1)
            target = f"src/handler_{k}.py"
            if kind == 1:
                rec = {
                    "type": "model.call",
                    "model": "m",
                    "messages": [{"role": "user", "content": f"step {step}"}],
                }
            elif kind == 2:
                rec = {
                    "type": "model.result",
                    "model": "m",
                    "output": f"I will edit {target} (step {step}).",
                    "usage": {"input_tokens": 100, "output_tokens": 40},
                }
            elif kind == 3:
                rec = {
                    "type": "intent",
                    "tool": "write_file",
                    "args": {"path": target},
                    "target": target,
                    "effect": "fs",
                    "step": step,
                    "pre": names[(k, v)],
                    "post": names[(k, v + 1)],
                }
            else:
                rec = {
                    "type": "commit",
                    "ref": lsn - 1,
                    "post": sha256_bytes(source(k, v + 1)),
                    "verified": {"post": True, "check": None},
                }
            put({**base, "lsn": lsn, **rec})
            lsn += 1


# -- measuring one size (in its own process) --------------------------------------------------
def raw_baseline(path: Path, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        with open(path, "rb") as f:
            for line in f:
                orjson.loads(line)
        best = min(best, time.perf_counter() - t)
    return best


def plain_baseline(path: Path) -> float:
    t = time.perf_counter()
    with open(path, "rb") as f:
        for line in f:
            datetime.fromisoformat(orjson.loads(line)["ts"]).timestamp()
    return time.perf_counter() - t


async def serve_and_step(path: Path, steps: int) -> dict[str, float]:
    """Read the journal with the viewer's own loader thread, serve its page as soon as there is one
    and again once the whole journal is read, then step through it.

    Both times run from the loader thread's start (NiceGUI's own start-up, the same for every size,
    is not part of them) until the page's HTML is back; the first page is requested while the
    loader is still reading, as a browser would.
    """
    from nicegui.testing import UserInteraction, user_simulation
    from walkback.viewer.app import make_store

    store = make_store([path])
    entry = next(iter(store.entries.values()))
    started: list[float] = []
    start = store.start

    def timed_start() -> None:
        started.append(time.perf_counter())
        start()

    store.start = timed_start  # type: ignore[method-assign]
    sys.modules["_walkback_bench"] = types.SimpleNamespace(store=store)  # type: ignore[assignment]
    main = Path(tempfile.mkdtemp(prefix="wb-bench-")) / "main.py"
    main.write_text(MAIN)
    url = f"/s/{entry.id}/step/1"
    async with user_simulation(main_file=main) as user:
        user.http_client.base_url = "http://127.0.0.1"  # the viewer answers only a Host naming this machine
        while entry.session is None:
            await asyncio.sleep(0.002)
        partial = entry.partial
        html = (await user.http_client.get(url)).text
        first = time.perf_counter() - started[0]
        assert '"title":"Step 1"' in html, "the page did not show the session: " + html[:300]
        while entry.loading or entry.partial:
            await asyncio.sleep(0.002)
        t1 = time.perf_counter()
        html = (await user.http_client.get(url)).text
        page = time.perf_counter() - t1
        full = t1 - started[0] + page
        assert '"title":"Step 1"' in html and "events so far" not in html
        while entry.derived is None or entry.derived.approvals is None:  # the second pass, as a reader waits
            await asyncio.sleep(0.01)
        await user.open(url)
        layout = UserInteraction(user, {user.client.layout}, None)
        rounds = []
        for _ in range(ROUNDS):  # best of a few rounds of the same steps: this 2-core machine is shared
            layout.trigger("wb_key", {"key": "Home", "repeat": False})
            lat = []
            for _ in range(steps):
                t = time.perf_counter()
                layout.trigger("wb_key", {"key": "j", "repeat": False})
                lat.append(time.perf_counter() - t)
                await asyncio.sleep(0)
            lat.sort()
            rounds.append((lat[int(len(lat) * 0.95)], lat[len(lat) // 2]))
    p95, p50 = min(rounds)
    return {
        "first": first,
        "first_partial": float(partial),
        "first_shown": entry.first_seconds,
        "full": full,
        "load": entry.load_seconds,
        "import": entry.import_seconds,
        "page": page,
        "p50": p50,
        "p95": p95,
    }


def measure(path: Path, steps: int) -> dict[str, float]:
    # NiceGUI's user simulation (the app over an in-process ASGI client, no browser) only runs with
    # this flag set; keep its storage out of the working directory too.
    os.environ.setdefault("PYTEST_CURRENT_TEST", "bench/viewer.py")
    import walkback.viewer.app  # noqa: F401 - import cost is not part of the page time
    from nicegui import app
    from nicegui.storage import Storage

    Storage.path = Path(tempfile.mkdtemp(prefix="wb-bench-storage-"))
    app.storage = Storage()

    rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    size = path.stat().st_size
    raw = raw_baseline(path, reps=2 if size > 100e6 else 5)
    plain = plain_baseline(path)
    out = asyncio.run(serve_and_step(path, steps))
    out.update(
        raw=raw,
        plain=plain,
        size=size,
        rss_start=rss_start,
        rss_peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )
    return out


# -- driver -------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,100000,1000000")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "walkback-bench-viewer")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.steps)))
        return
    results: dict[int, dict[str, float]] = {}
    for n in (int(s) for s in args.sizes.split(",")):
        path = args.dir / f"run-{n}" / "journal.jsonl"
        if not path.exists():
            print(f"generating {n:,} events …", file=sys.stderr)
            generate(path, n)
        proc = subprocess.run(
            [sys.executable, __file__, "--measure", str(path), "--steps", str(args.steps)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        results[n] = json.loads(proc.stdout.strip().splitlines()[-1])
        r = results[n]
        rss = r["rss_peak"] / r["size"]
        above = (r["rss_peak"] - r["rss_start"]) / r["size"]
        print(f"{n:,} events ({r['size'] / 1e6:.1f} MB); raw orjson.loads {r['raw']:.3f} s")
        what = "a first chunk, still loading" if r["first_partial"] else "the whole session: one chunk"
        print(
            f"  first page {r['first']:.3f} s ({what}; in the store after {r['first_shown']:.3f} s)"
            f" -> ratio {r['first'] / r['raw']:.2f} (goal <= 0.3)"
        )
        print(
            f"  full page  {r['full']:.3f} s = read {r['load']:.3f} (importer {r['import']:.3f})"
            f" + page {r['page']:.3f} -> ratio {r['full'] / r['raw']:.2f};"
            f" {r['full'] / r['plain']:.2f} x plain ({r['plain']:.3f} s)"
        )
        print(f"  step      p50 {r['p50'] * 1e3:.1f} ms, p95 {r['p95'] * 1e3:.1f} ms")
        print(
            f"  peak RSS  {r['rss_peak'] / 1e6:.0f} MB -> {rss:.2f} x file (goal <= 1.0);"
            f" {above:.2f} x above the {r['rss_start'] / 1e6:.0f} MB interpreter"
        )
    small, big = min(results), max(results)
    if small != big:
        a, b = results[small], results[big]
        print(
            f"step p95 at {big:,} / at {small:,}: {b['p95'] / a['p95']:.2f} (goal <= 1.5; "
            f"{b['p95'] * 1e3:.1f} ms, goal < 50 ms)"
        )


if __name__ == "__main__":
    main()
