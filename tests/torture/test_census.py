"""The sweep tables name every failpoint a clean run passes, with its exact count.

A failpoint added on the path of a task, or a count that changed, fails here, so the
every-failpoint sweep never silently stops covering a crash point.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep import CHILDREN, MULTI_CHILD, MULTI_MAIN, RENAME5, expand
from torturekit import SCENARIOS, Lab
from walkback.journal.record import SYNC_TYPES


def deterministic(census: dict[tuple[str, str], int], agent: str) -> dict[str, int]:
    """The census of one agent without ``.mid`` (reached only when armed) and without the
    group-commit timer's fsyncs (their count depends on timing)."""
    out = {}
    for (a, name), n in census.items():
        if a != agent or name == "census":
            continue
        kind, _, rest = name.partition(".")
        rtype = rest.rsplit(".", 1)[0]
        if kind == "fsync" and rtype not in SYNC_TYPES:
            continue
        out[name] = n
    return out


def without_mid(table: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in expand(table).items() if not k.endswith(".mid")}


@pytest.mark.parametrize(
    "scenario,tables",
    [("rename5", {"main": RENAME5}), ("multi", {"main": MULTI_MAIN, **dict.fromkeys(CHILDREN, MULTI_CHILD)})],
)
def test_the_sweep_covers_every_failpoint_of_a_clean_run(
    tmp_path: Path, scenario: str, tables: dict[str, dict[str, int]]
) -> None:
    lab = Lab(SCENARIOS[scenario], tmp_path)
    for agent, table in tables.items():
        assert deterministic(lab.census, agent) == without_mid(table), agent
