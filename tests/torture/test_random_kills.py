"""Jepsen-style: SIGKILL the whole agent (process group) after a seeded random delay, then resume,
sometimes killing the resumes too; the seed is in the test id and in the failure report.

The soak tier runs all 600 seeds (with the other torture suites, about 1,000 kills); the default
tier a fixed sample of them."""

from __future__ import annotations

import pytest
from sweep import Seeded
from tiers import sample

SEEDS = (
    [Seeded("rename5", s) for s in range(1, 251)]
    + [Seeded("rename40", s) for s in range(1, 131)]
    + [Seeded("multi", s) for s in range(1, 221)]
)

pytestmark = pytest.mark.slow  # the cases run two at a time (conftest.py)


@pytest.mark.parametrize("case", sample(SEEDS, 10))
def test_killed_at_a_random_time_the_run_resumes_to_the_clean_result(torture, case: Seeded) -> None:  # type: ignore[no-untyped-def]
    out = torture.outcome(case)
    assert out.ok, out.report()
