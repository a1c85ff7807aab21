"""Fixtures for the recovery tests; the builders are in ``recovery_helpers``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from recovery_helpers import Run, make_repo
from walkback.journal import JournalWriter


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    ws = tmp_path / "ws"
    base = make_repo(ws)
    w = JournalWriter.create(
        tmp_path / "runs" / "r1",
        task="Rename getUserById to fetchUser",
        run="r1",
        workspace=str(ws),
        base_ref=base,
        planner="scripted",
    )
    r = Run(tmp_path / "runs" / "r1", ws, w, base)
    yield r
    w.close()


