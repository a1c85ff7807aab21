"""timeline.query on real journals: every filter, text search over raw bytes, facets, history."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sample_runs import XSS, build_run
from walkback.journal import JournalWriter
from walkback.timeline.query import Query, facets, file_rows, locate, problems_mask, select, text_mask

from walkback import importers


@pytest.fixture
def session(tmp_path: Path):
    return importers.load(build_run(tmp_path, recovered=True, torn=True).dir)


def kinds_of(session, idx) -> list[str]:
    return [session.event(int(i)).kind for i in idx]


def test_empty_query_selects_everything(session) -> None:
    assert list(select(session, Query())) == list(range(len(session)))


def test_kind_agent_status_filters(session) -> None:
    calls = select(session, Query(kinds=frozenset({"tool_call"})))
    assert len(calls) == 5 and set(kinds_of(session, calls)) == {"tool_call"}
    helper = select(session, Query(agents=frozenset({"helper"})))
    assert {session.event(int(i)).agent for i in helper} == {"helper"} and len(helper) == 5
    failed = select(session, Query(statuses=frozenset({"failed"})))
    assert {session.event(int(i)).type for i in failed} == {"intent", "fail", "test.result"}
    assert len(select(session, Query(kinds=frozenset({"tool_call"}), agents=frozenset({"helper"})))) == 1


def test_tool_and_file_filters_bring_the_completions_along(session) -> None:
    rename = select(session, Query(tools=frozenset({"replace_symbol"})))
    types = [session.event(int(i)).type for i in rename]
    # the approval request names the tool too; the intent brings its commit, the request its decision
    assert types == ["approval.request", "approval.decision", "intent", "commit"]
    app = select(session, Query(files=frozenset({"src/app.py"})))
    assert [session.event(int(i)).type for i in app] == [
        "intent",
        "commit",
        "approval.request",
        "approval.decision",
        "intent",
        "commit",
    ]
    assert len(select(session, Query(files=frozenset({"no/such/file"})))) == 0


def test_problems_only(session) -> None:
    probs = select(session, Query(problems=True))
    got = {(session.event(int(i)).type, session.event(int(i)).status) for i in probs}
    assert ("intent", "failed") in got and ("fail", "failed") in got  # a failed action
    assert ("approval.request", "denied") in got  # a denied approval
    assert ("test.result", "failed") in got
    assert ("recovery", "not_applied") in got  # recovery records
    assert ("commit", "recovered") in got and ("intent", "recovered") in got
    assert ("commit", "ok") not in got
    assert problems_mask(session).sum() == len(probs)


def test_pending_intent_is_a_problem(tmp_path: Path) -> None:
    s = importers.load(build_run(tmp_path, recovered=False).dir)
    probs = select(s, Query(problems=True))
    assert any(s.event(int(i)).status == "pending" for i in probs)


def test_text_search_scans_raw_records_smart_case(session) -> None:
    hit = select(session, Query(text="rename the function"))
    assert kinds_of(session, hit) == ["model_result"]
    assert len(select(session, Query(text="RENAME the function"))) == 0  # capitals: exact case
    assert len(select(session, Query(text="I WILL".lower()))) == 1  # lower: any case
    child = select(session, Query(text="test_fetch"))  # in the child journal
    assert {session.event(int(i)).agent for i in child} == {"helper"}
    assert len(select(session, Query(text="zzz-not-there"))) == 0


def test_text_search_finds_json_escaped_text(tmp_path: Path) -> None:
    s = importers.load(build_run(tmp_path, xss=True).dir)
    # quotes and newlines are escaped inside the JSON line; the search still finds the text as written
    quoted = select(s, Query(text='onerror="window.__xss=1"'))
    assert "run_start" in kinds_of(s, quoted)
    multiline = select(s, Query(text="```\n</script>"))
    assert kinds_of(s, multiline) == ["model_result"]
    assert XSS["agent"] in {s.event(int(i)).agent for i in select(s, Query(text="test_fetch"))}


def test_text_search_finds_a_torn_record_only_in_its_placeholder_row(tmp_path: Path) -> None:
    run = build_run(tmp_path, torn=True)
    s = importers.load(run.dir)
    # the torn tail's bytes contain "inte": they belong to the placeholder row shown for it, no other
    tail = run.journal.read_bytes().rsplit(b"\n", 1)[1]
    assert b'"type":"inte' in tail
    m = text_mask(s, '"type":"inte')
    (placeholder,) = [i for i in range(len(s)) if s.event(i).status == "torn"]
    calls = select(s, Query(kinds=frozenset({"tool_call"})))
    assert m[placeholder] and m.sum() == len(calls) + 1


def test_query_round_trips_through_url_params() -> None:
    q = Query(
        kinds=frozenset({"tool_call", "recovery"}),
        agents=frozenset({"main"}),
        files=frozenset({"a b.py"}),
        statuses=frozenset({"failed"}),
        tools=frozenset({"write_file"}),
        text="x&y=z",
        problems=True,
    )
    assert Query.from_params(q.to_params()) == q
    assert Query().to_params() == {}
    assert Query.from_params({"kind": "nonsense,tool_call"}).kinds == frozenset({"tool_call"})


def test_facets_and_file_history(session) -> None:
    f = facets(session)
    assert dict(f.kinds)["tool_call"] == 5
    assert dict(f.agents) == {"main": 22, "helper": 5}  # main's 21 records and its torn line
    assert dict(f.files) == {"src/app.py": 2, "README.md": 1, "tests/test_app.py": 1, "docs/notes.md": 1}
    assert f.problems == int(problems_mask(session).sum())
    rows = file_rows(session)
    assert [session.event(int(i)).tool for i in rows["src/app.py"]] == ["write_file", "replace_symbol"]
    assert all(np.all(np.diff(r) > 0) for r in rows.values())


def test_locate_follows_an_event_across_reloads(tmp_path: Path) -> None:
    run = build_run(tmp_path, crashed=True)
    a = importers.load(run.dir)
    i = int(select(a, Query(kinds=frozenset({"test_result"})))[-1])
    w = JournalWriter.open(run.journal)
    w.append("model.result", model="m", output="more")
    w.close()
    b = importers.load(run.dir)
    j = locate(b, int(a.table.src[i]), int(a.table.offset[i]))
    assert j is not None and b.event(j).type == "test.result" and b.event(j).lsn == a.event(i).lsn
    assert locate(b, 0, 10**12) is None
