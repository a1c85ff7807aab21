"""The HTML replay's cost: its size against the bundle of the same session (goal <= 1.3), and how
soon a headless Chromium shows its first step from file:// (goal < 1 s for 10k events), against
the same Chromium loading a plain page of the same bytes (the floor: reading and parsing the
file); for 100k events also how long one step takes (j pressed, the step drawn).

    ./run bench handoff [--events 10000 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_note, report, scratch_dir  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402

CHROMEDRIVER = "/usr/bin/chromedriver"


def walkback(*args: str | Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    exe = Path(sys.executable).with_name("walkback")
    subprocess.run([str(exe), *map(str, args)], check=True, capture_output=True, env=env)


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")
    o = webdriver.ChromeOptions()
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1280,900",
        "--proxy-server=http://127.0.0.1:9",
    ):
        o.add_argument(a)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)


def first_step(d: Any, page: Path) -> float:
    """Seconds from navigation to the first step drawn."""
    d.get(page.as_uri())
    while d.execute_script("return window.wbFirstStep === undefined"):
        time.sleep(0.01)
    return float(d.execute_script("return window.wbFirstStep")) / 1000


def plain_load(d: Any, page: Path) -> float:
    """Seconds from navigation to DOMContentLoaded of a plain page of the same size."""
    d.get(page.as_uri())
    return (
        float(
            d.execute_script(
                "return performance.timing.domContentLoadedEventEnd - performance.timing.navigationStart"
            )
        )
        / 1000
    )


def one_step(d: Any, rounds: int = 20) -> float:
    """Seconds per step: j pressed, the next card drawn (measured in the page)."""
    took = d.execute_script(
        "const t = performance.now();"
        f"for (let k = 0; k < {rounds}; k++)"
        "  document.dispatchEvent(new KeyboardEvent('keydown', {key: 'j'}));"
        "return performance.now() - t;"
    )
    return float(took) / 1000 / rounds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not Path(CHROMEDRIVER).exists():
        print("chromedriver is not installed; nothing measured")
        return 0
    print(f"walkback export html: the replay vs its bundle and vs a plain page ({load_note()})")
    ok = True
    with scratch_dir("walkback-bench-handoff-") as tmp:
        root = Path(tmp)
        walkback("keygen", "-o", root / "k")
        d = browser()
        try:
            for n in args.events:
                journal = root / f"j{n}.jsonl"
                synth_journal(journal, n)
                t = time.perf_counter()
                walkback("export", "html", journal, "-o", root / f"r{n}.html", "--key", root / "k")
                html_s = time.perf_counter() - t
                t = time.perf_counter()
                walkback("export", "bundle", journal, "-o", root / f"b{n}.json", "--key", root / "k")
                bundle_s = time.perf_counter() - t
                size = (root / f"r{n}.html").stat().st_size
                bundle = (root / f"b{n}.json").stat().st_size
                plain = root / f"p{n}.html"
                plain.write_bytes(b"<!doctype html><title>plain</title><pre>" + b"x" * size + b"</pre>")
                ok &= report(
                    f"{n:,} events: replay size / bundle size",
                    size / bundle,
                    "<= 1.3",
                    size / bundle <= 1.3,
                    f"{size / 1e6:.1f} MB vs {bundle / 1e6:.1f} MB",
                )
                report(
                    f"{n:,} events: export html / export bundle time",
                    html_s / bundle_s,
                    "",
                    True,
                    f"{html_s:.1f} s vs {bundle_s:.1f} s",
                )
                firsts, floors = [], []
                for _ in range(args.rounds):  # interleaved: the page, then the floor
                    firsts.append(first_step(d, root / f"r{n}.html"))
                    floors.append(plain_load(d, plain))
                first, floor = min(firsts), min(floors)
                goal_ok = first < 1.0 if n <= 10_000 else True
                ok &= report(
                    f"{n:,} events: first step / plain page load",
                    first / floor,
                    "",
                    goal_ok,
                    f"first step {first * 1000:.0f} ms (goal < 1000 ms at 10k), plain {floor * 1000:.0f} ms",
                )
                first_step(d, root / f"r{n}.html")  # the replay again (the floor was loaded last)
                step = one_step(d)
                report(
                    f"{n:,} events: one step (j) in ms", step * 1000, "< 50", step < 0.05, "drawn in the page"
                )
        finally:
            d.quit()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
