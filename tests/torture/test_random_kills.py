"""Jepsen-style: SIGKILL the whole agent (process group) after a seeded random delay, then resume,
sometimes killing the resumes too; the seed is in the test id and in the failure report."""

from __future__ import annotations

import pytest
from sweep import Seeded

SEEDS = (
    [Seeded("rename5", s) for s in range(1, 13)]
    + [Seeded("rename40", s) for s in range(1, 7)]
    + [Seeded("multi", s) for s in range(1, 11)]
)

pytestmark = pytest.mark.slow  # runs by default; the cases run two at a time (conftest.py)


@pytest.mark.parametrize("case", SEEDS, ids=str)
def test_killed_at_a_random_time_the_run_resumes_to_the_clean_result(torture, case: Seeded) -> None:  # type: ignore[no-untyped-def]
    out = torture.outcome(case)
    assert out.ok, out.report()
