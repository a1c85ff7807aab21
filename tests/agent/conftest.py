"""Fixtures for the agent tests: real git repositories, the real demo service, real subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def walkback_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never write runs under the real ~/.walkback."""
    home = tmp_path / "home"
    monkeypatch.setenv("WALKBACK_HOME", str(home))
    for var in ("WALKBACK_FAILPOINT", "WALKBACK_FAILPOINT_AGENT", "WALKBACK_FAILPOINT_HELD"):
        monkeypatch.delenv(var, raising=False)
    return home


