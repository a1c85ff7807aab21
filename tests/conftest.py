"""Shared fixtures. Plugins are never loaded under tests (see importers.registry)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from walkback.agent.demo_service import DemoService

sys._called_from_test = True  # type: ignore[attr-defined]

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def service(tmp_path: Path) -> Iterator[DemoService]:
    """The demo service (real HTTP on 127.0.0.1) that honours Idempotency-Key and logs every call."""
    svc = DemoService(tmp_path / "service")
    svc.start()
    yield svc
    svc.stop()
