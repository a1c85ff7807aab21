"""SIGKILL at every failpoint on the path of the rename and the multi-agent task, then resume.

Each case: the run dies at ``WALKBACK_FAILPOINT=name:nth`` (in the parent, or in one subagent,
which its parent then restarts), ``walkback agent resume`` recovers and finishes it, and the
oracle compares everything with a clean run (see ``oracle.py``). The default tier kills at a
fixed sample of the failpoints, the soak tier at every one.
"""

from __future__ import annotations

import pytest
from sweep import failpoint_cases
from tiers import sample
from torturekit import Case

pytestmark = pytest.mark.slow  # the cases run two at a time (conftest.py)


@pytest.mark.parametrize("case", sample(failpoint_cases(), 24))
def test_killed_at_a_failpoint_the_run_resumes_to_the_clean_result(torture, case: Case) -> None:  # type: ignore[no-untyped-def]
    out = torture.outcome(case)
    assert out.kills == 1, out.report()
    assert out.ok, out.report()
