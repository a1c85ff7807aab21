"""An OTLP/JSON export read back by walkback's own ``otel`` importer gives the same agents, tool
calls and counts as the session it was made from."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from walkback.exporters import exporter
from walkback.importers import importers, load
from walkback.journal.testing import synth_journal
from walkback.timeline.details import ModelResult
from walkback.timeline.session import Session
from walkback.timeline.views import approval_counts, approvals, files_summary

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

pytestmark = pytest.mark.skipif("otel" not in importers(), reason="the otel importer is not registered yet")


def round_trip(session: Session, tmp_path: Path) -> Session:
    out = exporter("otlp").export(session, tmp_path / "trace.json")
    back = load(Path(str(out)))
    assert back.format.startswith("otel")
    return back


def calls(s: Session) -> Counter[tuple[str, str, str, str]]:
    return Counter((e.agent, e.tool, e.target, e.status) for e in s.events(s.indices_where(kind="tool_call")))


@pytest.mark.parametrize("sample", ["multi-agent", "rename-crashed", "release-in-doubt"])
def test_agents_tool_calls_and_counts_come_back(sample: str, tmp_path: Path) -> None:
    s = load(SAMPLES / sample)
    back = round_trip(s, tmp_path)
    assert {a: x.parent for a, x in back.agents.items()} == {a: x.parent for a, x in s.agents.items()}
    assert calls(back) == calls(s)
    for kind in ("approval_request", "approval_decision", "checkpoint", "recovery", "test_result"):
        assert back.kinds().get(kind, 0) == s.kinds().get(kind, 0), kind
    assert approval_counts(approvals(back)) == approval_counts(approvals(s))
    assert [(f["path"], f["changes"]) for f in files_summary(back)] == [
        (f["path"], f["changes"]) for f in files_summary(s)
    ]


def test_model_calls_and_their_tokens_come_back(tmp_path: Path) -> None:
    synth_journal(tmp_path / "journal.jsonl", 301)
    s = load(tmp_path / "journal.jsonl")
    back = round_trip(s, tmp_path)

    def usage(x: Session) -> tuple[int, int, int]:
        found = [d for i in x.indices_where(kind="model_result") if isinstance(d := x.detail(i), ModelResult)]
        return (
            len(found),
            sum(d.usage.input_tokens or 0 for d in found),
            sum(d.usage.output_tokens or 0 for d in found),
        )

    assert usage(back) == usage(s)
    assert calls(back) == calls(s)
