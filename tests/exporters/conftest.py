"""The OTLP push tests' Phoenix server, started as soon as the collected tests include them
(see ``phoenix_server.py``): its minute of start-up runs beside the tests before them."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from phoenix_server import Phoenix
from tiers import runs

PHOENIX = pytest.StashKey[Phoenix]()


def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker collects all: the one that runs them starts it
        return
    if any(item.path.name == "test_otlp_push.py" and runs(item) for item in session.items):
        session.config.stash[PHOENIX] = Phoenix()


@pytest.fixture(scope="session")
def phoenix(request: pytest.FixtureRequest) -> Iterator[str]:
    """The Phoenix server's base URL (on 127.0.0.1)."""
    server = request.config.stash.get(PHOENIX, None) or Phoenix()
    yield server.url()
    server.stop()
