"""Viewer under load: page loads of a real server (``walkback view`` in its own process).

* memory: 1,000 tabs opened and closed (each: the session page over HTTP, its socket connected as
  a browser's would be, then closed), 20 at a time; the server's RSS once they are all closed and
  NiceGUI has deleted their clients, vs before (goal: <= 100 MB more);
* latency: 500 loads of the session page, 20 concurrent: p50 / p95 (goal: p95 <= 300 ms), the
  server's RSS once those pages (never connected, as a script's or a prefetch's) are pruned and
  collected, vs before them (goal: <= 30 MB more), then after as many loads again (a page view
  that kept anything grows it again; the allocator's high-water mark does not), and
  the same loads of the framework's floor: a NiceGUI page (its own server process, same machine)
  holding as many elements as the session page, all of them plain labels. ratio = session p95 /
  floor p95 (how much of the latency is the viewer's own rather than any NiceGUI page's).

Usage: ``./run bench viewer_load [--session samples/demo] [--tabs 1000] [--loads 500] [--concurrency 20]``
Only 127.0.0.1 is contacted; every loop is bounded.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import socketio

ROOT = Path(__file__).resolve().parent.parent
QUERY = re.compile(r"query: (\{[^}]*\})")
TAG = re.compile(r'"tag":')
"""One per element in the page's embedded element tree."""
FLOOR = """
import sys
from nicegui import ui

@ui.page("/{n}")
def page(n: int) -> None:
    for i in range(min(n, 10_000)):
        ui.label(f"label {i}")

ui.run(host="127.0.0.1", port=int(sys.argv[1]), show=False, reload=False, show_welcome_message=False)
"""
"""The floor: a NiceGUI page of ``n`` labels."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def open_tab(http: aiohttp.ClientSession, base: str, path: str, hold: float) -> float:
    """Load the page, connect its socket as the browser does, keep it ``hold`` s, close the tab."""
    t = time.perf_counter()
    async with http.get(base + path) as r:
        html = await r.text()
    took = time.perf_counter() - t
    m = QUERY.search(html)
    if not m:
        raise RuntimeError(f"no socket query in the page {path} ({r.status})")
    query = ast.literal_eval(m.group(1))  # a Python dict literal in the page
    query.update(document_id=str(uuid.uuid4()), tab_id=str(uuid.uuid4()), old_tab_id="")
    query = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
    sio = socketio.AsyncClient(reconnection=False)
    qs = "&".join(f"{k}={v}" for k, v in query.items())
    await sio.connect(
        f"{base}?{qs}", socketio_path="/_nicegui_ws/socket.io", transports=["websocket"], wait_timeout=10
    )  # a busy 2-core machine can take more than the default second to answer
    await asyncio.sleep(hold)
    await sio.disconnect()
    return took


async def run_tabs(base: str, path: str, n: int, concurrency: int, hold: float) -> list[float]:
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession() as http:

        async def one() -> float:
            async with sem:
                return await open_tab(http, base, path, hold)

        return await asyncio.gather(*(one() for _ in range(n)))


async def run_loads(base: str, path: str, n: int, concurrency: int) -> list[float]:
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession() as http:

        async def one() -> float:
            async with sem:
                t = time.perf_counter()
                async with http.get(base + path) as r:
                    await r.read()
                    assert r.status == 200, r.status
                return time.perf_counter() - t

        return await asyncio.gather(*(one() for _ in range(n)))


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p))]


@contextmanager
def server(args: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A server process of this interpreter, once it accepts connections on ``port``; stopped after."""
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(f"{args[:2]} did not start") from None
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def count_elements(url: str) -> int:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return len(TAG.findall(await r.text()))


def latency(base: str, path: str, args: argparse.Namespace) -> list[float]:
    asyncio.run(run_loads(base, path, 40, args.concurrency))  # warm
    time.sleep(1)
    return asyncio.run(run_loads(base, path, args.loads, args.concurrency))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--session", type=Path, default=ROOT / "samples" / "demo")
    ap.add_argument("--tabs", type=int, default=1000)
    ap.add_argument("--loads", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--hold", type=float, default=0.2, help="seconds each tab stays open")
    args = ap.parse_args()
    from walkback.importers.folders import entry_id
    from walkback.viewer.tuning import CHECK_SECONDS, UNCONNECTED_SECONDS

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    path = f"/s/{entry_id(args.session)}/step/1"
    view = ["-m", "walkback", "view", str(args.session), "--no-open", "--port", str(port)]
    with server(view, port) as viewer:
        asyncio.run(run_tabs(base, path, 40, args.concurrency, args.hold))  # warm: imports, caches
        time.sleep(6)  # closed tabs are deleted after NiceGUI's reconnect timeout (3 s)
        before = rss_mb(viewer.pid)
        t = time.perf_counter()
        asyncio.run(run_tabs(base, path, args.tabs, args.concurrency, args.hold))
        took = time.perf_counter() - t
        peak = rss_mb(viewer.pid)
        time.sleep(8)
        after = rss_mb(viewer.pid)
        print(
            f"{args.session.name}: {args.tabs:,} tabs opened and closed,"
            f" {args.concurrency} at a time, in {took:.1f} s"
        )
        print(
            f"  server RSS {before:.0f} MB before, {peak:.0f} MB right after, {after:.0f} MB once closed"
            f" -> +{after - before:.0f} MB (goal <= 100 MB)"
        )
        elements = asyncio.run(count_elements(base + path))
        loaded_from = rss_mb(viewer.pid)
        lat = latency(base, path, args)
        time.sleep(UNCONNECTED_SECONDS + 2 * CHECK_SECONDS + 1)  # their pages pruned, then collected
        idle = rss_mb(viewer.pid)
        asyncio.run(run_loads(base, path, args.loads, args.concurrency))
        time.sleep(UNCONNECTED_SECONDS + 2 * CHECK_SECONDS + 1)
        again = rss_mb(viewer.pid)
    floor_port = free_port()
    floor_base = f"http://127.0.0.1:{floor_port}"
    with server(["-c", FLOOR, str(floor_port)], floor_port):
        labels = elements - asyncio.run(count_elements(floor_base + "/0"))  # less NiceGUI's own
        floor = latency(floor_base, f"/{labels}", args)
    rate = args.loads / sum(lat) * args.concurrency
    print(
        f"  {args.loads} page loads, {args.concurrency} concurrent: p50 {pct(lat, 0.5) * 1e3:.0f} ms,"
        f" p95 {pct(lat, 0.95) * 1e3:.0f} ms (goal <= 300 ms), {rate:.0f} pages/s;"
        f" the page has {elements} elements"
    )
    print(
        f"  server RSS {loaded_from:.0f} MB before those loads, {idle:.0f} MB once idle"
        f" -> +{idle - loaded_from:.0f} MB (goal <= 30 MB); {args.loads} more: {again:.0f} MB"
        f" -> +{again - idle:.0f} MB (what the pages keep, not the heap's high-water mark)"
    )
    print(
        f"  floor, a NiceGUI page of {labels} labels (+ its own {elements - labels}), the same loads:"
        f" p50 {pct(floor, 0.5) * 1e3:.0f} ms, p95 {pct(floor, 0.95) * 1e3:.0f} ms"
        f" -> session p95 / floor p95 {pct(lat, 0.95) / pct(floor, 0.95):.2f}"
    )


if __name__ == "__main__":
    main()
