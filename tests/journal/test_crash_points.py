"""A writer process SIGKILLed at each of its crash points leaves a journal the reader classifies
right and repair makes whole: what was acknowledged survives, a half-written line is a torn tail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from walkback.journal import JournalWriter, read_records, repair, scan

WRITER = """
import sys
from walkback.journal import JournalWriter
w = JournalWriter.create(sys.argv[1], task="crash test", group_interval=3600)
w.append("plan", steps=["a"])
w.append("model.result", model="m", output="go")
for step in range(3):
    lsn = w.append("intent", tool="write_file", target=f"f{step}", effect="fs", pre="absent", post="absent")
    print(lsn, flush=True)  # acknowledged: append returned
    w.append("commit", ref=lsn, post="absent", verified={"post": True, "check": None})
w.append("run.end", status="completed")
w.close()
print("done", flush=True)
"""


def _crash(tmp_path: Path, point: str) -> tuple[Path, list[str]]:
    run = tmp_path / "run"
    env = {**os.environ, "WALKBACK_FAILPOINT": point}
    p = subprocess.run([sys.executable, "-c", WRITER, str(run)], env=env, capture_output=True, text=True)
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr)
    return run / "journal.jsonl", p.stdout.split()


@pytest.mark.parametrize(
    ("point", "torn"),
    [
        ("write.intent.before:2", False),
        ("write.intent.mid:2", True),
        ("write.intent.after:2", False),
        ("fsync.intent.before:2", False),
        ("fsync.intent.after:2", False),
        ("write.commit.mid:3", True),
        ("write.run.end.mid", True),
    ],
)
def test_a_killed_writer_leaves_a_readable_prefix_and_at_most_a_torn_tail(
    tmp_path: Path, point: str, torn: bool
) -> None:
    path, acked = _crash(tmp_path, point)
    records, res = read_records(path)
    assert not res.corrupt
    assert bool(res.torn) == torn
    lsns = [r.lsn for r in records]
    assert lsns == list(range(len(lsns))), "the prefix is whole"
    assert all(int(a) in lsns for a in acked), "every acknowledged intent is in the journal"
    if torn:
        assert res.torn[0].reason == "partial last line (no newline)"
        report = repair(path)
        assert report.truncated_bytes == res.torn_tail["bytes"]  # type: ignore[index]
        assert scan(path).intact
        with JournalWriter.open(path) as w:
            w.append("run.end", status="failed")
        assert scan(path).intact


def test_without_a_failpoint_the_writer_finishes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "WALKBACK_FAILPOINT"}
    p = subprocess.run(
        [sys.executable, "-c", WRITER, str(run)], env=env, capture_output=True, text=True, check=True
    )
    assert p.stdout.split()[-1] == "done"
    assert scan(run).intact and scan(run).records == 10
