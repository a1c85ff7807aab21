"""Simulated power loss at every fsync of a real rename run: recovered exactly, or flagged, never wrong.

The run's journal, blob and workspace writes go through ``crashfs.RecordingOps``; for the point
just before each fsync (and the end) ``crashfs.crash_states`` builds what the disk may hold —
unsynced writes dropped, torn at 512 B, landed as NULs, reordered, directory entries (a rename, a
create, an unlink) lost without their directory fsync, or kept without their data — and each
distinct state is written back and resumed (recovery first): every state in the soak tier
(``--soak``), a fixed seeded sample of :data:`SAMPLE` of them in the default tier, which holds
every kind of state (for the journal and for the other files) at least once.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from crashfs import CrashState, RecordingOps, crash_states, sync_points
from powerloss import Recorded, Settled, record, settle

SAMPLE = 60


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONDONTWRITEBYTECODE", "1")  # the task's tests must not leave bytecode behind
        for var in ("WALKBACK_FAILPOINT", "WALKBACK_FAILPOINT_AGENT", "WALKBACK_FAILPOINT_HELD"):
            mp.delenv(var, raising=False)
        yield record(tmp_path_factory.mktemp("powerloss"))


@pytest.fixture(scope="module")
def states(recorded: Recorded, soak: bool) -> list[CrashState]:
    unique = {}
    for s in crash_states(recorded.ops.initial, recorded.ops.log, sync_points(recorded.ops.log)):
        unique.setdefault(s.key, s)
    found = list(unique.values())
    if soak or len(found) <= SAMPLE:
        return found
    order = random.Random(0).sample(range(len(found)), len(found))
    first = {_kind(found[i]): i for i in reversed(order)}  # one of each kind, then the rest
    keep = set(first.values())
    keep.update([i for i in order if i not in keep][: max(0, SAMPLE - len(keep))])
    return [s for i, s in enumerate(found) if i in keep]


def _kind(s: CrashState) -> tuple[str, bool]:
    """What kind of state ``s`` is (``meta-2-of-5,drop``: ``meta-some,drop``), and whether of the journal."""
    kind = s.variant.split(":")[0].split("@")[0]
    if kind.startswith("meta-") and kind != "meta-lost,drop":
        kind = "meta-some,drop"
    return kind, s.variant.endswith("run/journal.jsonl")


@pytest.fixture(scope="module")
def settled(recorded: Recorded, states: list[CrashState]) -> Iterator[list[tuple[CrashState, Settled]]]:
    t0 = time.monotonic()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONDONTWRITEBYTECODE", "1")
        out = [(s, settle(recorded, s)) for s in states]
    counts = Counter(r.outcome for _, r in out)
    print(f"\npower loss: {len(out)} crash states in {time.monotonic() - t0:.0f}s: {dict(counts)}")
    yield out


def test_every_crash_state_recovers_to_the_clean_result_or_is_flagged(
    settled: list[tuple[CrashState, Settled]],
) -> None:
    wrong = [f"op {s.at} {s.variant}: {'; '.join(r.problems)}" for s, r in settled if r.problems]
    assert not wrong, f"{len(wrong)} of {len(settled)} crash states went wrong:\n" + "\n".join(wrong[:20])


def test_the_model_built_every_kind_of_crash_state(
    recorded: Recorded, states: list[CrashState], settled: list[tuple[CrashState, Settled]]
) -> None:
    ops = Counter(op.kind for op in recorded.ops.log)
    assert {"create", "write", "sync", "replace", "unlink", "dirsync"} <= set(ops), ops
    kinds = Counter(_kind(s)[0] for s in states)
    assert {"meta-lost,drop", "drop", "full", "torn", "nul", "reorder"} <= set(kinds), kinds
    journal_variants = {s.variant.split(":")[0] for s in states if s.variant.endswith("run/journal.jsonl")}
    assert {"nul", "reorder"} <= {v.split("@")[0] for v in journal_variants} and any(
        v.startswith("torn@") for v in journal_variants
    ), journal_variants
    outcomes = Counter(r.outcome for _, r in settled)
    assert outcomes["recovered"] > len(settled) // 2, outcomes
    assert outcomes["never-started"] and outcomes["ended"], outcomes


class SkipsDirectoryFsyncs(RecordingOps):
    """A broken file layer: it never fsyncs a directory, so no create or rename is ever durable."""

    def fsync_dir(self, path: Path) -> None:
        """Skipped (and so not recorded either)."""


def test_the_check_catches_a_file_layer_that_skips_directory_fsyncs(tmp_path: Path) -> None:
    """Without directory fsyncs the journal can outlive the renames it committed: after the power
    loss the run claims work the workspace does not hold, and the check must say so."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONDONTWRITEBYTECODE", "1")
        rec = record(tmp_path, SkipsDirectoryFsyncs)
        end = list(crash_states(rec.ops.initial, rec.ops.log, [len(rec.ops.log)]))
        results = [settle(rec, s) for s in end[:: max(1, len(end) // 12)]]
    assert any(r.outcome == "WRONG" for r in results), [r.outcome for r in results]
