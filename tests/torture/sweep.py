"""Which kills the torture runs: every failpoint on each task's path, recovery kills, random kills.

The tables below are the census of a clean run (how many times each process reaches each
failpoint); ``test_census.py`` checks them against a live clean run, so a failpoint added to the
code without a sweep entry, or a count that changed, fails loudly instead of going untested.
``write.<type>`` stands for ``write.<type>.before``, ``.mid`` and ``.after``; ``fsync.<type>`` for
``fsync.<type>.before`` and ``.after``. Only records the writer always syncs have ``fsync``
entries: the group-commit timer's fsyncs depend on timing, so no nth of them is sure to exist.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from torturekit import Case, Crash

RENAME5 = {
    "apply.after_tmp_write": 5,
    "apply.after_tmp_fsync": 5,
    "apply.after_rename": 5,
    "apply.after_unlink": 1,
    "apply.after_dir_fsync": 6,
    "verify.after": 7,
    "command.after_run": 1,
    "checkpoint.after_git_commit": 4,
    "write.run.start": 1,
    "write.plan": 1,
    "write.intent": 7,
    "write.commit": 7,
    "write.test.result": 1,
    "write.checkpoint": 4,
    "write.run.end": 1,
    "fsync.run.start": 1,
    "fsync.intent": 7,
    "fsync.checkpoint": 4,
    "fsync.run.end": 1,
}
"""The main agent of ``small_rename.json``: 5 renames, a delete, the tests, 4 checkpoints."""

MULTI_MAIN = {
    "spawn.after_child_start": 3,
    "apply.after_tmp_write": 2,
    "apply.after_tmp_fsync": 2,
    "apply.after_rename": 2,
    "apply.after_dir_fsync": 2,
    "verify.after": 4,
    "command.after_run": 1,
    "approval.after_request": 1,
    "external.after_call": 1,
    "checkpoint.after_git_commit": 2,
    "write.run.start": 1,
    "write.plan": 1,
    "write.agent.spawn": 3,
    "write.agent.end": 3,
    "write.intent": 4,
    "write.commit": 4,
    "write.test.result": 1,
    "write.approval.request": 1,
    "write.approval.decision": 1,
    "write.checkpoint": 2,
    "write.run.end": 1,
    "fsync.run.start": 1,
    "fsync.agent.spawn": 3,
    "fsync.intent": 4,
    "fsync.approval.decision": 1,
    "fsync.checkpoint": 2,
    "fsync.run.end": 1,
}
"""The parent of ``multi_agent``: fan-out of 3, changelog, tests, gated release, changelog."""

MULTI_CHILD = {
    "apply.after_tmp_write": 2,
    "apply.after_tmp_fsync": 2,
    "apply.after_rename": 2,
    "apply.after_dir_fsync": 2,
    "verify.after": 3,
    "command.after_run": 1,
    "write.run.start": 1,
    "write.plan": 1,
    "write.intent": 3,
    "write.commit": 3,
    "write.test.result": 1,
    "write.run.end": 1,
    "fsync.run.start": 1,
    "fsync.intent": 3,
    "fsync.run.end": 1,
}
"""Each subagent of ``multi_agent`` (auth, billing, search): two edits, then its tests."""

CHILDREN = ("auth", "billing", "search")


def expand(table: dict[str, int]) -> dict[str, int]:
    """Failpoint name -> count, with ``write.<type>`` and ``fsync.<type>`` spelled out."""
    out: dict[str, int] = {}
    for name, n in table.items():
        stages = {"write": ("before", "mid", "after"), "fsync": ("before", "after")}.get(name.split(".")[0])
        for stage in stages or ("",):
            out[f"{name}.{stage}" if stage else name] = n
    return out


def nths(count: int, *, wide: bool) -> list[int]:
    """First and last occurrence; with ``wide`` the middle one too."""
    return sorted({1, count} | ({(count + 1) // 2} if wide else set()))


def failpoint_cases() -> list[Case]:
    """Every failpoint of both tasks: the rename at 3 occurrences, the multi-agent parent at its
    first and last, each subagent failpoint in one subagent (in turn), and the spawn kills again
    with the subagents left running (the resumed parent must wait for and adopt them)."""
    cases = [
        Case("rename5", Crash(f"{name}:{k}"))
        for name, n in expand(RENAME5).items()
        for k in nths(n, wide=True)
    ]
    cases += [
        Case("multi", Crash(f"{name}:{k}", agent="main"))
        for name, n in expand(MULTI_MAIN).items()
        for k in nths(n, wide=False)
    ]
    cases += [
        Case("multi", Crash(f"{name}:{k}", agent="main", orphans=True))
        for name in ("spawn.after_child_start", "fsync.agent.spawn.after")
        for k in (1, 3)
    ]
    for i, (name, n) in enumerate(expand(MULTI_CHILD).items()):
        child = CHILDREN[i % len(CHILDREN)]
        cases.append(Case("multi", Crash(f"{name}:{n if i % 2 else 1}", agent=child)))
    return cases


RECOVERY_KILLS: list[tuple[str, str, list[str]]] = [
    # (scenario, first kill, kills of the resumes that follow, in turn)
    ("rename5", "apply.after_tmp_write:2", ["recovery.before_decision:1"]),
    ("rename5", "apply.after_tmp_write:2", ["recovery.after_decision:1"]),
    ("rename5", "apply.after_tmp_write:2", ["write.recovery.mid:1"]),
    ("rename5", "apply.after_tmp_write:2", ["fsync.recovery.after:1"]),
    ("rename5", "apply.after_tmp_write:2", ["recovery.after_apply:1"]),
    ("rename5", "apply.after_tmp_write:2", ["write.commit.mid:1"]),
    ("rename5", "apply.after_tmp_write:2", ["recovery.after_commit:1"]),
    ("rename5", "apply.after_rename:4", ["recovery.after_decision:1", "recovery.after_commit:1"]),
    ("rename5", "apply.after_unlink:1", ["recovery.after_decision:1"]),
    ("rename5", "write.intent.mid:3", ["repair.after_copy:1"]),
    ("rename5", "write.intent.mid:3", ["repair.after_truncate:1"]),
    ("rename5", "write.intent.mid:3", ["write.journal.recovered.mid:1"]),
    ("rename5", "write.intent.mid:3", ["repair.after_truncate:1", "recovery.after_decision:1"]),
    ("rename5", "command.after_run:1", ["recovery.after_apply:1", "recovery.after_apply:1"]),
    ("multi", "external.after_call:1", ["recovery.after_decision:1"]),
    ("multi", "external.after_call:1", ["recovery.after_apply:1", "recovery.after_commit:1"]),
    ("multi", "approval.after_request:1", ["fsync.approval.decision.after:1"]),
    ("multi", "command.after_run:1", ["recovery.after_apply:1"]),
]
"""Kills inside recovery (the resume dies while recovering, sometimes again): every resume listed
must really die there; the last resume of each case runs undisturbed."""


def recovery_cases() -> list[Case]:
    return [
        Case(sc, Crash(first, agent="main"), tuple(Crash(r, agent="main") for r in then))
        for sc, first, then in RECOVERY_KILLS
    ]


def random_case(scenario: str, seed: int, start: float, end: float) -> Case:
    """A kill after a seeded random delay in ``[start, end)``, then up to two resumes killed the
    same way; for the multi-agent task sometimes with the subagents left running.

    ``start`` is when a clean run's header became durable (process start-up; under load some
    kills still land before it), ``end`` its wall time (some runs finish before their kill).
    """
    rng = random.Random(f"{scenario}:{seed}")
    orphans = scenario == "multi" and rng.random() < 0.25

    def delay() -> float:
        return round(rng.uniform(start, end), 3)

    first = Crash(delay=delay(), orphans=orphans)
    then = tuple(Crash(delay=delay()) for _ in range(rng.choice((0, 0, 1, 2))))
    return Case(scenario, first, then, seed=seed)


@dataclass(frozen=True)
class Seeded:
    """A random-kill case before its delays are drawn (they scale with the clean run's time)."""

    scenario: str
    seed: int

    def case(self, start: float, end: float) -> Case:
        return random_case(self.scenario, self.seed, start, end)

    def __str__(self) -> str:
        return f"{self.scenario}-seed-{self.seed}"
