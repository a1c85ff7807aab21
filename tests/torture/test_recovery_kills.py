"""Killed while recovering: the resume itself dies inside recovery (again and again), a rerun finishes.

Each case kills the run where it leaves recovery work (a redo, a commit, a torn tail to cut, a
command to re-run, a keyed call to reissue, an approval to ask again), then kills each listed
resume at a ``recovery.*``/``repair.*`` failpoint or inside a recovery record's write, then lets a
last resume finish. Every listed kill must really happen, and the result must equal a clean run.
The journals are also checked with the real ``walkback check`` command. The default tier runs a
fixed sample of the cases, the soak tier every one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from oracle import journals
from sweep import recovery_cases
from tiers import sample
from torturekit import ROOT, Case

pytestmark = pytest.mark.slow  # the cases run two at a time (conftest.py)


@pytest.mark.parametrize("case", sample(recovery_cases(), 4))
def test_a_resume_killed_during_recovery_is_finished_by_the_next(torture, case: Case) -> None:  # type: ignore[no-untyped-def]
    out = torture.outcome(case)
    assert out.kills == 1 + len(case.resume_crashes), out.report()
    assert out.ok, out.report()
    assert out.observed is not None
    for path in journals(out.observed.run_dir).values():
        p = subprocess.run(
            [sys.executable, "-m", "walkback", "check", str(path)], cwd=ROOT, capture_output=True, text=True
        )
        assert p.returncode == 0 and ": intact:" in p.stdout, p.stdout + p.stderr
