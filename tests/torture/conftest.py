"""The torture runs its cases two at a time: the first test that needs an outcome runs them all.

Each test is one case (``case`` parameter); the session fixture collects the cases of the tests
actually selected that run in this tier (``-k`` works; the tiers: ``tests/conftest.py``), builds
each scenario's clean run once, then runs the cases in a thread pool of ``WALKBACK_TORTURE_WORKERS``
(default: the number of CPUs) — the work is in the subprocesses, so threads are enough. The
terminal summary reports the kills and passes.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sweep import Seeded
from tiers import runs
from torturekit import SCENARIOS, Case, Lab, Outcome

Spec = Case | Seeded
WORKERS = int(os.environ.get("WALKBACK_TORTURE_WORKERS") or os.cpu_count() or 2)
TORTURE = pytest.StashKey["Torture"]()


class Torture:
    """The selected cases, their scenarios' labs, and (once run) their outcomes."""

    def __init__(self, root: Path, specs: list[Spec]) -> None:
        self.root = root
        self.specs = list(dict.fromkeys(specs))
        self.labs: dict[str, Lab] = {}
        self.outcomes: dict[Spec, Outcome] = {}
        self.seconds = 0.0
        self._lock = threading.Lock()

    def outcome(self, spec: Spec) -> Outcome:
        with self._lock:
            if spec not in self.outcomes:
                self._run([s for s in self.specs if s not in self.outcomes] or [spec])
            return self.outcomes[spec]

    def _run(self, specs: list[Spec]) -> None:
        t0 = time.monotonic()
        for name in dict.fromkeys(s.scenario for s in specs):
            if name not in self.labs:
                self.labs[name] = Lab(SCENARIOS[name], self.root / f"lab-{name}")
        start = len(self.outcomes)

        def one(i_spec: tuple[int, Spec]) -> tuple[Spec, Outcome]:
            i, spec = i_spec
            lab = self.labs[spec.scenario]
            case = spec.case(lab.header_at, lab.golden.seconds) if isinstance(spec, Seeded) else spec
            return spec, lab.run(case, self.root / f"case-{start + i:04d}")

        with ThreadPoolExecutor(WORKERS) as pool:
            self.outcomes.update(pool.map(one, enumerate(specs)))
        self.seconds += time.monotonic() - t0


@pytest.fixture(scope="session")
def torture(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Torture:
    params = (
        getattr(getattr(item, "callspec", None), "params", {}) for item in request.session.items if runs(item)
    )
    # other test folders have `case` parameters too: keep only torture cases
    specs = [p["case"] for p in params if isinstance(p.get("case"), (Case, Seeded))]
    t = Torture(tmp_path_factory.mktemp("torture"), specs)
    request.config.stash[TORTURE] = t
    return t


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    t = config.stash.get(TORTURE, None)
    if t is None or not t.outcomes:
        return
    outs = list(t.outcomes.values())
    kills = sum(o.kills for o in outs)
    passed = [o for o in outs if o.ok]
    early = sum(o.before_header for o in outs)
    terminalreporter.write_sep("-", "crash torture")
    terminalreporter.write_line(
        f"{len(outs)} cases, {kills} SIGKILLs ({early} before the journal had a header), "
        f"{len(passed)} cases passed, {kills - sum(o.kills for o in outs if not o.ok)} kills recovered "
        f"exactly; {t.seconds:.0f}s with {WORKERS} workers"
    )
    for o in outs:
        if not o.ok:
            terminalreporter.write_line("FAILED " + o.report())
