"""RunLock: one live writer per run; a killed holder frees the lock (that is how a crash shows)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from walkback.journal import JournalError
from walkback.journal.runlock import RunLock, lock_is_held

HOLD = """
import sys, time
from walkback.journal.runlock import RunLock
RunLock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_lock_is_exclusive_while_a_process_holds_it_and_free_after_sigkill(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        assert lock_is_held(tmp_path)
        assert (tmp_path / "lock").read_text().strip() == str(proc.pid)
        with pytest.raises(JournalError, match="another process is writing this run"):
            RunLock(tmp_path).acquire()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 5
    while lock_is_held(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not lock_is_held(tmp_path)
    with RunLock(tmp_path):
        pass


def test_no_lock_file_means_no_live_writer(tmp_path: Path) -> None:
    assert not lock_is_held(tmp_path)
    with RunLock(tmp_path) as lock:
        assert lock.path.exists()
    assert not lock_is_held(tmp_path)
