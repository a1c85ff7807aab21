"""Shared fixtures, and the two test tiers. Plugins are never loaded under tests (see importers.registry).

Tiers: ``./run test`` (the default tier) runs every behaviour, browser tests included, in minutes;
``./run test --soak`` also runs the full counts of the suites that repeat one check many times
(the torture's kills, the power-loss states, the importers' mutation fuzz). The convention for a
test of that kind:

* ``@pytest.mark.soak``: the test runs only under ``--soak`` (skipped, and said so, otherwise);
* ``tiers.sample(values, keep)`` (``tests/tiers.py``): parametrize over every value, all but an
  evenly spread, fixed ``keep`` of them marked ``soak``;
* the ``soak`` fixture (a bool) for a count that is not a parameter:
  ``n = 10_000 if soak else 300``.

Seeds are fixed and in the test id or the failure message, so a failure in either tier
reproduces with the same command. Keep a new test's default-tier cost to seconds.

Test files are imported by their basename (tests/ has no packages), so each name is unique
across tests/: ``tests/hooks/test_follow.py`` beside ``tests/importers/test_follow.py`` stops the
whole suite at collection.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from walkback.agent.demo_service import DemoService

sys._called_from_test = True  # type: ignore[attr-defined]

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak", action="store_true", help="also run the soak tier: every kill, state and mutation"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("soak"):
        return
    skip = pytest.mark.skip(reason="soak tier: runs with --soak")
    for item in items:
        if item.get_closest_marker("soak"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def soak(request: pytest.FixtureRequest) -> bool:
    """True under ``--soak``: use the full count."""
    return bool(request.config.getoption("soak"))


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
