"""The timeline model as the journal importer fills it: pairs, pending, files, approvals, frames."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from walkback.importers import load
from walkback.journal import JournalWriter
from walkback.journal.testing import write_run
from walkback.timeline import KINDS, Session
from walkback.timeline.frame import frame
from walkback.timeline.query import file_rows
from walkback.timeline.views import approvals, file_change


@pytest.fixture
def crashed(tmp_path: Path) -> Session:
    """5 committed steps, then an intent whose effect never committed, and no run.end."""
    write_run(tmp_path / "run", steps=5, end=None, pending=True)
    return load(tmp_path / "run")


def _of_type(s: Session, typ: str) -> list[int]:
    return [e.index for e in s.events() if e.type == typ]


def test_every_intent_is_paired_with_its_commit(crashed: Session) -> None:
    intents, commits = _of_type(crashed, "intent"), _of_type(crashed, "commit")
    assert len(intents) == 6 and len(commits) == 5
    for i, c in zip(intents, commits, strict=False):
        assert crashed.completion_of(i) == c
        assert crashed.event(c).ref == i and crashed.raw(c)["ref"] == crashed.event(i).lsn
        assert crashed.event(i).status == "ok"
    assert crashed.completion_of(intents[-1]) is None
    assert crashed.completion_of(0) is None


def test_pending_intents_last_committed_lsn_and_status(crashed: Session) -> None:
    late = _of_type(crashed, "intent")[-1]
    assert crashed.pending() == [late]
    ev = crashed.event(late)
    assert (ev.status, ev.tool, ev.target) == ("pending", "write_file", "src/late.py")
    assert crashed.last_committed_lsn == crashed.event(_of_type(crashed, "commit")[-1]).lsn
    assert crashed.status == "crashed" and not crashed.recovered
    assert crashed.integrity.chain == "ok" and crashed.integrity.torn_tail is None


@pytest.mark.parametrize("end", ["completed", "failed", "cancelled", "exploded"])
def test_status_comes_from_run_end(tmp_path: Path, end: str) -> None:
    write_run(tmp_path / "run", steps=1, end=end)
    assert load(tmp_path / "run").status == (end if end != "exploded" else "unknown")


def test_a_run_whose_lock_is_held_is_running(tmp_path: Path) -> None:
    write_run(tmp_path / "run", steps=1, end=None)
    hold = (
        "import sys, time; from journal.runlock import RunLock; RunLock(sys.argv[1]).acquire(); "
        "print(1, flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path / "run")], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline()
        assert load(tmp_path / "run").status == "running"
    finally:
        proc.kill()
        proc.wait()
    assert load(tmp_path / "run").status == "crashed"


def test_file_history_and_file_changes_with_blob_content(crashed: Session) -> None:
    history = {k: list(map(int, v)) for k, v in file_rows(crashed).items()}
    intents = _of_type(crashed, "intent")
    assert history == {
        "src/m0.py": [intents[0], intents[3]],
        "src/m1.py": [intents[1], intents[4]],
        "src/m2.py": [intents[2]],
        "src/late.py": [intents[5]],
    }
    for step, i in enumerate(intents[:5]):
        fc = file_change(crashed, i)
        assert fc is not None and fc.path == f"src/m{step % 3}.py" and fc.tool == "write_file"
        assert fc.result == crashed.completion_of(i)
        assert crashed.blob(fc.pre) == f"v{step}\n".encode()
        assert crashed.blob(fc.post) == f"v{step + 1}\n".encode()
    late = file_change(crashed, intents[5])
    assert late is not None and late.pre == "absent" and late.result is None
    assert crashed.blob(late.pre) is None and crashed.blob(late.post) == b"unfinished\n"
    assert file_change(crashed, 0) is None and file_change(crashed, _of_type(crashed, "commit")[0]) is None


def test_approvals_pair_request_decision_and_the_gated_call(crashed: Session) -> None:
    (a,) = approvals(crashed)
    assert (a.decision, a.approver, a.reason, a.tool, a.target) == (
        "approved",
        "alice",
        "ok",
        "write_file",
        "src/m1.py",
    )
    assert a.request == _of_type(crashed, "approval.request")[0]
    assert a.decision_event == _of_type(crashed, "approval.decision")[0]
    assert a.gated == _of_type(crashed, "intent")[1]
    assert crashed.event(a.request).status == "approved"


def test_frame_has_one_row_per_event_for_filtering(crashed: Session) -> None:
    df = frame(crashed)
    assert len(df) == len(crashed)
    assert list(df.columns) == ["kind", "lsn", "time", "agent", "type", "tool", "target", "status", "ref"]
    assert df["kind"].value_counts()[lambda c: c > 0].to_dict() == crashed.kinds()
    calls = df[df["kind"] == "tool_call"]
    assert list(calls.index) == _of_type(crashed, "intent")
    assert list(df.loc[df["status"] == "pending", "target"]) == ["src/late.py"]
    assert str(df["time"].dt.tz) == "UTC" and df["time"].notna().all()
    assert set(df["agent"]) == {"main"} and df["lsn"].tolist() == list(range(len(df)))


def test_events_keep_provenance_and_the_raw_record_is_read_lazily(crashed: Session) -> None:
    path = crashed.sources[0].path
    lines = path.read_bytes().splitlines()
    for e in crashed.events():
        assert e.source == str(path) and lines[e.line - 1].startswith(b'{"v":1,"lsn":%d,' % e.lsn)
        assert crashed.raw(e.index)["lsn"] == e.lsn
    assert crashed.table.offset[3] > 0 and not crashed.payloads, "no parsed record is held in memory"


def _journal(tmp_path: Path) -> JournalWriter:
    return JournalWriter.create(tmp_path / "run", task="t", group_interval=0)


def test_a_recovery_decision_refers_to_an_intent_without_completing_it(tmp_path: Path) -> None:
    w = _journal(tmp_path)
    i = w.append(
        "intent", tool="write_file", target="a.py", effect="fs", pre="absent", post="sha256:" + "1" * 64
    )
    w.append(
        "recovery", ref=i, target="a.py", tool="write_file", finding="not_applied", action="redo", detail=""
    )
    c = w.append(
        "commit", ref=i, post="sha256:" + "1" * 64, verified={"post": True, "check": None}, recovered=True
    )
    w.append("run.end", status="completed")
    w.close()
    s = load(w.path)
    assert s.completion_of(i) == c, "the commit completes the intent, not the recovery record"
    assert s.event(_of_type(s, "recovery")[0]).ref == i
    assert s.event(i).status == "recovered" and s.recovered and s.pending() == []
    (f,) = s.recovery_findings
    assert (f.lsn, f.finding, f.action, f.target) == (i, "not_applied", "redo", "a.py")


def test_an_in_doubt_intent_stays_pending_and_is_marked(tmp_path: Path) -> None:
    w = _journal(tmp_path)
    i = w.append("intent", tool="external_call", target="https://x", effect="external")
    w.append(
        "recovery", ref=i, target="https://x", tool="external_call", finding="in_doubt", action="ask_human"
    )
    w.close()
    s = load(w.path)
    assert s.event(i).status == "in_doubt" and s.pending() == []
    assert s.completion_of(i) is None


def test_unknown_record_types_are_kept_as_other_with_their_raw_source(tmp_path: Path) -> None:
    w = _journal(tmp_path)
    n = w.append("telemetry.blip", payload={"x": 1})
    w.close()
    s = load(w.path)
    assert s.event(n).kind == "other" and s.event(n).type == "telemetry.blip"
    assert s.raw(n)["payload"] == {"x": 1}
    assert "other" in KINDS and s.kinds()["other"] == 1


def test_torn_lines_are_counted_as_skipped_with_line_and_reason(tmp_path: Path) -> None:
    write_run(tmp_path / "run", steps=1)
    path = tmp_path / "run" / "journal.jsonl"
    n = len(path.read_bytes().splitlines())
    with open(path, "ab") as f:
        f.write(b"\x00" * 20)
    s = load(tmp_path / "run")
    assert s.integrity.skipped == [
        {"file": str(path), "line": n + 1, "reason": "NUL bytes (space reserved but never written)"}
    ]
    assert s.integrity.torn_tail == {"offset": path.stat().st_size - 20, "bytes": 20}
    assert s.integrity.badge == "torn tail"


def test_subagent_journals_are_read_into_one_session(tmp_path: Path) -> None:
    parent = JournalWriter.create(tmp_path / "run", task="fan out", run="R", group_interval=0)
    spawn = parent.append(
        "agent.spawn", child_run="R:1", child_agent="a1", child_dir="agents/a1", task="sub", step=0
    )
    child = JournalWriter.create(
        tmp_path / "run" / "agents" / "a1",
        task="sub",
        run="R:1",
        agent="a1",
        parent={"run": "R", "lsn": spawn},
    )
    ci = child.append("intent", tool="write_file", target="c.py", effect="fs", pre="absent", post="absent")
    child.append("commit", ref=ci, post="absent", verified={"post": True, "check": None})
    child.append("run.end", status="completed")
    child.close()
    parent.append("agent.end", ref=spawn, child_agent="a1", child_run="R:1", outcome="completed")
    parent.append("run.end", status="completed")
    parent.close()
    s = load(tmp_path / "run")
    assert list(s.agents) == ["main", "a1"] and s.runs == ["R", "R:1"]
    a1 = s.agents["a1"]
    assert (a1.parent, a1.outcome, a1.events, a1.task) == ("main", "completed", 4, "sub")
    assert a1.spawned_by is not None and s.event(a1.spawned_by).type == "agent.spawn"
    times = [e.ts for e in s.events()]
    assert times == sorted(times), "events of both journals are interleaved by time"
    child_intent = next(e for e in s.events() if e.agent == "a1" and e.type == "intent")
    assert s.completion_of(child_intent.index) is not None
    assert s.event(s.completion_of(child_intent.index) or 0).agent == "a1"
    assert s.status == "completed" and len(s.sources) == 2


@pytest.mark.parametrize("child_dir", ["../elsewhere", "/etc", "", ".", "a\x00b", "agents/../../elsewhere"])
def test_a_spawn_pointing_outside_the_run_directory_is_not_followed(tmp_path: Path, child_dir: str) -> None:
    write_run(tmp_path / "elsewhere", steps=1)
    w = JournalWriter.create(tmp_path / "run", task="t")
    w.append("agent.spawn", child_run="x", child_agent="evil", child_dir=child_dir, task="t")
    w.close()
    s = load(tmp_path / "run")
    assert list(s.agents) == ["main"] and len(s.sources) == 1
    assert s.kinds()["agent_spawn"] == 1


SEQ = (
    b'{"seq":0,"task_id":"T1","tool":"write_file","args":{"path":"a.txt"},"idempotency_key":"T1:0"}\n'
    b'{"seq":0,"result":{"ok":true},"status":"ok"}\n'
    b'{"seq":1,"task_id":"T1","tool":"http_post","args":{"url":"https://x"},"idempotency_key":"T1:1"}\n'
    b'{"seq":2,"task_id":"T1","tool":"write_file","args":{"path":"b.txt"},"idempotency_key":"T1:2"}\n'
    b'{"seq":2,"result":null,"status":"error"}\n'
)


def test_seq_dialect_pairs_by_seq(tmp_path: Path) -> None:
    path = tmp_path / "seq.jsonl"
    path.write_bytes(SEQ)
    s = load(path)
    assert s.format == "walkback-seed-seq" and s.task == "T1" and s.runs == ["T1"]
    assert [(e.kind, e.lsn, e.status, e.ref) for e in s.events()] == [
        ("tool_call", 0, "ok", None),
        ("tool_result", 0, "ok", 0),
        ("tool_call", 1, "pending", None),
        ("tool_call", 2, "failed", None),
        ("tool_result", 2, "failed", 3),
    ]
    assert s.pending() == [2] and s.event(2).target == "https://x"
    assert s.last_committed_lsn == 0 and s.status == "crashed" and s.integrity.chain == "absent"


def test_lsn_dialect_commit_names_its_intent_by_intent_or_ref(tmp_path: Path) -> None:
    path = tmp_path / "lsn.jsonl"
    path.write_bytes(
        b'{"lsn":23,"type":"plan","steps":[]}\n'
        b'{"lsn":24,"type":"intent","tool":"replace_symbol","file":"src/api/users.ts","pre":"sha256:aa","post":"sha256:bb"}\n'
        b'{"lsn":25,"type":"commit","intent":24}\n'
        b'{"lsn":26,"type":"intent","tool":"write_file","path":"b.ts"}\n'
        b'{"lsn":27,"type":"commit","ref":26}\n'
        b'{"lsn":28,"type":"checkpoint","git":"abc"}\n'
    )
    s = load(path)
    assert s.format == "walkback-seed-lsn"
    assert s.completion_of(1) == 2 and s.completion_of(3) == 4 and s.pending() == []
    assert {k: list(map(int, v)) for k, v in file_rows(s).items()} == {"src/api/users.ts": [1], "b.ts": [3]}
    fc = file_change(s, 1)
    assert fc is not None and (fc.pre, fc.post) == ("sha256:aa", "sha256:bb")
    assert s.last_committed_lsn == 27 and s.status == "unknown"
