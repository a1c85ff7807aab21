"""Importing a large Claude Code session against raw parsing of the same lines, memory against its
size, and the peer claude-code-log on the same session.

A session of about --mb megabytes is built from the corpus: the records of its session files are
repeated, each copy with fresh ids (uuids, tool use, message and request ids), into one session
file; the session with four subagents (b3a7bd3c...) comes first, and its four subagent files are
scaled the same way, so a fifth of the bytes are subagents read into the same session.

(1) full import (``importers.load``: every line of every file parsed, mapped, paired, interleaved
    by time) vs ``orjson.loads`` of every line of the same files.   ratio = import / raw, goal <= 3.0.
(2) peak RSS of a fresh process importing it (VmHWM) vs the session's size.   goal <= 1.0.
(3) the viewer on the same session (``bench/viewer.py --measure``, in its own process): the first
    usable page after the loader starts (goal <= 1.5 s) and the step p95 (goal < 50 ms).
(4) claude-code-log (``claude-code-log FILE -o OUT.html``: HTML of the transcript), when installed
    (on the PATH, or in the venv named by CLAUDE_CODE_LOG_VENV), run once on the same session file:
    its time against the import's, its peak RSS against the import's.

Usage: ./run bench import_claude_code [--mb N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, load_note, report, report_peak_rss, scratch_dir, timed  # noqa: E402
from walkback.importers import load  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "claude-code"
PARENT = CORPUS / "vscode-copilot-chat" / "b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl"
BODIES = (
    CORPUS / "vscode-copilot-chat" / "30530d66-37fb-4f3b-aa5f-d92b6a8afae2.jsonl",
    CORPUS / "spotter" / "subagent.jsonl",
    CORPUS / "vibecodingtracker" / "claude_code.jsonl",
    CORPUS / "spotter" / "short.jsonl",
)
SUBAGENT_SHARE = 0.2
_UUID = re.compile(rb"[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
_IDS = re.compile(rb'"(toolu_|tooluse_|msg_|req_|srvtoolu_)')


def fresh(data: bytes, copy: int) -> bytes:
    """``data`` with every id made this copy's own (consistently, so pairs and the tree hold)."""
    tag = b"%08x" % copy
    data = _UUID.sub(lambda m: tag + m.group(1), data)
    return _IDS.sub(lambda m: b'"' + m.group(1) + b"c" + tag + b"_", data)


def lines_of(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def repeat(out: Path, first: list[bytes], body: list[bytes], target: int) -> int:
    """Write ``first`` then copies of ``body`` (fresh ids each) up to ``target`` bytes; returns lines."""
    n = 0
    size = 0
    with open(out, "wb") as f:
        for line in first:
            f.write(line + b"\n")
            size += len(line) + 1
            n += 1
        copy = 1
        block = b"\n".join(body) + b"\n"
        while size < target:
            chunk = fresh(block, copy)
            f.write(chunk)
            size += len(chunk)
            n += len(body)
            copy += 1
    return n


def build(folder: Path, megabytes: int) -> tuple[Path, list[Path], int]:
    """The session file and its subagent files; returns them and the number of lines."""
    target = megabytes * 1_000_000
    main = folder / PARENT.name
    body = [line for p in BODIES for line in lines_of(p)]
    n = repeat(main, lines_of(PARENT), body, int(target * (1 - SUBAGENT_SHARE)))
    subs_in = sorted((PARENT.with_suffix("") / "subagents").glob("agent-*.jsonl"))
    subs_dir = main.with_suffix("") / "subagents"
    subs_dir.mkdir(parents=True)
    subs = []
    for sub in subs_in:
        out = subs_dir / sub.name
        n += repeat(out, [], lines_of(sub), int(target * SUBAGENT_SHARE / len(subs_in)))
        subs.append(out)
    return main, subs, n


def raw_loads(paths: list[Path]) -> None:
    loads = orjson.loads
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                loads(line)


def peer() -> list[str] | None:
    """The claude-code-log command, if installed."""
    venv = os.environ.get("CLAUDE_CODE_LOG_VENV")
    if venv and (Path(venv) / "bin" / "claude-code-log").is_file():
        return [str(Path(venv) / "bin" / "claude-code-log")]
    found = shutil.which("claude-code-log")
    return [found] if found else None


def run_peer(cmd: list[str], session: Path, out: Path) -> tuple[float, int, int] | None:
    """Seconds, peak RSS (bytes, from wait4: at least the peer's own) and HTML bytes of
    claude-code-log on ``session``; None when it fails."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        [*cmd, str(session), "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not out.is_file():
        print(f"  claude-code-log failed (exit {code}): {err.decode(errors='replace').strip()[-300:]}")
        return None
    return took, usage.ru_maxrss * 1024, out.stat().st_size


def viewer(session: Path) -> bool:
    """The viewer's first usable page and step latency on ``session`` (bench/viewer.py's measure)."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("viewer.py")), "--measure", str(session)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    r = orjson.loads(proc.stdout.strip().splitlines()[-1])
    ok = report(
        "viewer: first usable page (seconds)",
        r["first"],
        "<= 1.5",
        r["first"] <= 1.5,
        f"(after the loader starts; the whole session served after {r['full']:.2f} s)",
    )
    return ok & report(
        "viewer: step p95 (ms)",
        r["p95"] * 1e3,
        "< 50",
        r["p95"] < 0.05,
        f"(p50 {r['p50'] * 1e3:.1f} ms, server side, best of 3 rounds of 300 steps)",
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ok = True
    with scratch_dir("wb-bench-claude-") as tmp:
        session, subs, lines = build(Path(tmp), a.mb)
        files = [session, *subs]
        size = sum(p.stat().st_size for p in files)
        s = load(session)
        events = len(s)
        print(
            f"session of {size / 1e6:.0f} MB ({len(subs)} subagent files, {lines:,} lines):"
            f" {events:,} events, {len(s.agents)} agents"
        )
        print(f"best of {a.rounds} interleaved rounds; {load_note()}")
        del s
        cpu: list[list[float]] = [[], []]
        raw_t, imp_t = best_of(
            a.rounds, timed(lambda: raw_loads(files), cpu[0]), timed(lambda: load(session), cpu[1])
        )
        (raw_c,), (imp_c,) = cpu
        ok &= report(
            "full import / raw orjson.loads",
            imp_t / raw_t,
            "<= 3.0",
            imp_t / raw_t <= 3.0,
            f"(raw {raw_t:.2f} s, import {imp_t:.2f} s = {imp_t / lines * 1e6:.1f} us per line;"
            f" CPU ratio {imp_c / raw_c:.2f})",
        )
        met, peak = report_peak_rss(session, size, events, 1.0, of="session size")
        ok &= met
        ok &= viewer(session)
        cmd = peer()
        if cmd is None:
            print("claude-code-log: not installed (pip install claude-code-log; or set CLAUDE_CODE_LOG_VENV)")
        else:
            got = run_peer(cmd, session, Path(tmp) / "peer.html")
            if got is not None:
                took, rss, html = got
                print(
                    f"{'claude-code-log (HTML) / walkback import':<46} {took / imp_t:6.2f}   (claude-code-log"
                    f" {took:.1f} s writing {html / 1e6:.0f} MB of HTML; walkback {imp_t:.2f} s)"
                )
                print(
                    f"{'claude-code-log peak RSS / walkback peak RSS':<46} {rss / peak:6.2f}   (peer"
                    f" {rss / 1e6:.0f} MB; walkback {peak / 1e6:.0f} MB)"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
