"""The oracle is not a rubber stamp: each damage a wrong recovery could leave is reported."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from oracle import Observed, check, journals
from torturekit import Case, Crash

CASE = Case("rename5", Crash("apply.after_rename:3"))


@pytest.fixture
def observed(torture, tmp_path: Path) -> tuple[Observed, object]:  # type: ignore[no-untyped-def]
    """A copy of what a passing case left (with its acks pointing at the copy), and the golden."""
    out = torture.outcome(CASE)
    assert out.ok and out.observed is not None, out.report()
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    shutil.copytree(out.observed.ws, ws, symlinks=True)
    shutil.copytree(out.observed.run_dir, run_dir)
    old, new = str(out.observed.run_dir.resolve()), str(run_dir.resolve())
    acks = tmp_path / "acks.tsv"
    acks.write_text(out.observed.acks.read_text().replace(old, new))
    obs = Observed(ws, run_dir, acks, {})
    assert check(obs, torture.labs["rename5"].golden) == []
    return obs, torture.labs["rename5"].golden


@pytest.mark.parametrize("case", [CASE], ids=str)
def test_a_changed_workspace_byte_is_reported(observed, case: Case) -> None:  # type: ignore[no-untyped-def]
    obs, golden = observed
    (obs.ws / "users" / "api.py").write_text("def getUserById(uid): ...\n")
    assert any("workspace differs" in p for p in check(obs, golden))


@pytest.mark.parametrize("case", [CASE], ids=str)
def test_a_lost_acknowledged_record_is_reported(observed, case: Case) -> None:  # type: ignore[no-untyped-def]
    obs, golden = observed
    path = journals(obs.run_dir)["main"]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last record (run.end, fsynced) is gone
    problems = check(obs, golden)
    assert any("was lost or changed" in p for p in problems), problems
    assert any("means something else" in p for p in problems), problems


@pytest.mark.parametrize("case", [CASE], ids=str)
def test_a_repeated_or_unknown_effect_is_reported(observed, case: Case) -> None:  # type: ignore[no-untyped-def]
    obs, golden = observed
    problems = check(replace(obs, effects={"run:7": 2}), golden)
    assert any("acted 2 times" in p for p in problems) and any(
        "committed intents carry" in p for p in problems
    )


@pytest.mark.parametrize("case", [CASE], ids=str)
def test_a_missing_side_channel_is_reported(observed, case: Case) -> None:  # type: ignore[no-untyped-def]
    obs, golden = observed
    obs.acks.write_text("")
    assert any("no fsync" in p for p in check(obs, golden))
