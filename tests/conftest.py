"""Shared fixtures. Plugins are never loaded under tests (see importers.registry)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys._called_from_test = True  # type: ignore[attr-defined]

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def root() -> Path:
    return ROOT
