"""A million-event session loads, in little memory per event, with its payloads left on disk."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from walkback.importers import importers, load
from walkback.journal.testing import synth_journal

MEASURE = """
import json, os, sys
from walkback.importers import load

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

base = rss()
s = load(sys.argv[1])
# VmHWM, not ru_maxrss: Linux carries the forking pytest process's peak into a child's ru_maxrss
# across exec, so a big test process would be blamed on this load.
with open("/proc/self/status") as f:
    peak = int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) * 1024
i = s.pending()
print(json.dumps({"events": len(s), "base": base, "peak": peak, "kinds": s.kinds(),
                  "chain": s.integrity.chain, "last_lsn": s.event(len(s) - 1).lsn,
                  "raw_lsn": s.raw(len(s) - 1)["lsn"], "completion": s.completion_of(1)}))
"""

RETAINED_BYTES_PER_EVENT = 80
"""Columns cost 63 bytes per event and the lsn index 8; measured 65 retained on 100k events."""
PEAK_RSS_BYTES_PER_EVENT = 200
"""Peak RSS growth of a load, transient buffers and allocator slack included; measured ~140."""


@pytest.mark.slow
def test_a_million_event_session_loads_in_under_200_bytes_per_event(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    size = synth_journal(path, 1_000_000)
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout)
    assert got["events"] == 1_000_000 and got["chain"] == "ok"
    assert got["kinds"] == {
        "run_start": 1,
        "tool_call": 333_333,
        "tool_result": 333_333,
        "model_result": 333_333,
    }
    assert got["last_lsn"] == got["raw_lsn"] == 999_999 and got["completion"] == 2
    grown = got["peak"] - got["base"]
    assert grown / 1_000_000 < PEAK_RSS_BYTES_PER_EVENT, f"{grown / 1e6:.0f} bytes per event"
    assert got["peak"] < size, "the whole load peaks below the size of the file it reads"


def test_retained_memory_per_event_is_the_columns_not_the_records(tmp_path: Path) -> None:
    path = tmp_path / "50k.jsonl"
    synth_journal(path, 50_000)
    importers()  # the plugins register (their modules import) once per process: not per event
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        session = load(path)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(session) == 50_000
    assert retained / len(session) < RETAINED_BYTES_PER_EVENT, (
        f"{retained / len(session):.1f} bytes per event"
    )
    assert not session.payloads
