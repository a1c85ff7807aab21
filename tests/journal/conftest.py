"""Fixtures for the journal tests: a recording FileOps and a sample run."""

from __future__ import annotations

from pathlib import Path

import pytest
from journal_helpers import RecordingOps
from walkback.journal.testing import write_run


@pytest.fixture
def rec_ops() -> RecordingOps:
    return RecordingOps()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished run of 5 steps written by the real writer, with its blobs."""
    d = tmp_path / "run"
    write_run(d, steps=5)
    return d


@pytest.fixture
def journal_file(run_dir: Path) -> Path:
    return run_dir / "journal.jsonl"
