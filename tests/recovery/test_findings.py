"""Each finding on a v1 journal with real files in a git workspace, analysed then applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from recovery_helpers import Run, h
from walkback.agent.demo_service import DemoService
from walkback.journal import scan, sha256_file
from walkback.journal.recovery import Finding, RecoveryPlan, analyze, recover

NEW = b"def fetchUser(i):\n    return i\n\nx = fetchUser(1)\n"


def only(plan: RecoveryPlan) -> Finding:
    assert len(plan.findings) == 1, plan.findings
    return plan.findings[0]


def closing(run: Run, lsn: int) -> list[dict[str, Any]]:
    return [r for r in run.records() if r["type"] in ("commit", "fail") and r.get("ref") == lsn]


def test_committed_and_failed_intents_are_not_findings(run: Run) -> None:
    a = run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    (run.ws / "a.txt").write_bytes(b"a\n")
    run.commit(a, h(b"a\n"))
    b = run.file_intent("write_file", "b.txt", b"b\n", content="b\n")
    run.w.append("fail", ref=b, error="verification failed")
    plan = analyze(run.dir)
    assert plan.findings == []
    assert plan.committed_through == run.w.next_lsn - 1
    assert plan.next_lsn == run.w.next_lsn


def test_applied_is_reverified_and_committed_recovered(run: Run) -> None:
    lsn = run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser")
    (run.ws / "src/users.py").write_bytes(NEW)
    f = only(analyze(run.dir))
    assert (f.lsn, f.finding, f.action, f.target, f.tool) == (
        lsn,
        "applied",
        "commit",
        "src/users.py",
        "replace_symbol",
    )
    assert closing(run, lsn) == []  # analyze changes nothing
    plan = recover(run.dir, apply=True)
    [c] = closing(run, lsn)
    assert c["type"] == "commit" and c["recovered"] is True and c["post"] == h(NEW)
    assert c["verified"]["post"] is True
    rec = [r for r in run.records() if r["type"] == "recovery"]
    assert [(r["ref"], r["finding"], r["action"]) for r in rec] == [(lsn, "applied", "commit")]
    assert rec[0]["lsn"] < c["lsn"]  # decided (fsynced) before acting
    assert plan.findings[0].done


def test_applied_with_a_failing_check_is_failed_not_committed(run: Run) -> None:
    lsn = run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    run.w.close()
    # add a check to the intent the way the agent writes it: rebuild the journal with one
    recs = run.records()
    from walkback.journal import JournalWriter

    jdir = run.dir.parent / "r2"
    w = JournalWriter.create(jdir, task="t", run="r2", workspace=str(run.ws), base_ref=run.base)
    w.blobs.put(b"a\n")
    d = {
        k: v for k, v in recs[lsn].items() if k not in ("v", "lsn", "ts", "run", "agent", "type", "prev", "h")
    }
    lsn2 = w.append("intent", **{**d, "check": "test -s a.txt && grep -q never a.txt"})
    w.close()
    (run.ws / "a.txt").write_bytes(b"a\n")
    recover(jdir, apply=True)
    out = [orjson.loads(x) for x in (jdir / "journal.jsonl").read_bytes().splitlines()]
    [fail] = [r for r in out if r["type"] == "fail"]
    assert fail["ref"] == lsn2 and "check failed" in fail["error"]
    assert not [r for r in out if r["type"] == "commit"]


def test_not_applied_is_redone_from_the_post_blob(run: Run) -> None:
    lsn = run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser")
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("not_applied", "redo") and "blob store" in f.detail
    recover(run.dir, apply=True)
    assert (run.ws / "src/users.py").read_bytes() == NEW
    [c] = closing(run, lsn)
    assert c["recovered"] is True


def test_torn_is_restored_from_the_blob_store_then_redone(run: Run) -> None:
    lsn = run.file_intent("write_file", "src/keep.py", b"KEEP = 2\n", content="KEEP = 2\n")
    (run.ws / "src/keep.py").write_bytes(b"KE")  # a half-written file
    (run.ws / "src/keep.py.wb-tmp").write_bytes(b"KEEP = 2")  # and the temp a crash left
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("torn", "restore_redo")
    assert "restore pre from the blob store" in f.detail
    plan = recover(run.dir, apply=True)
    assert (run.ws / "src/keep.py").read_bytes() == b"KEEP = 2\n"
    assert not (run.ws / "src/keep.py.wb-tmp").exists()
    assert "restored from the blob store" in plan.findings[0].outcome
    assert closing(run, lsn)[0]["type"] == "commit"


def test_torn_without_blobs_restores_from_the_checkpoint_tree(run: Run) -> None:
    (run.ws / "src/keep.py").write_bytes(b"KEEP = 5\n")
    run.checkpoint()
    lsn = run.file_intent("ensure_line", "src/keep.py", b"KEEP = 5\nX = 1\n", line="X = 1", blobs=False)
    (run.ws / "src/keep.py").write_bytes(b"garbage")
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("torn", "restore_redo")
    assert "checkpoint" in f.detail and "ensure_line applied to" in f.detail
    recover(run.dir, apply=True)
    assert (run.ws / "src/keep.py").read_bytes() == b"KEEP = 5\nX = 1\n"
    assert closing(run, lsn)[0]["type"] == "commit"


def test_torn_without_blobs_restores_from_base_ref_and_computes_the_rename(run: Run) -> None:
    lsn = run.file_intent(
        "replace_symbol", "src/users.py", NEW, blobs=False, old="getUserById", new="fetchUser"
    )
    (run.ws / "src/users.py").write_bytes(b"def fetchUs")
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("torn", "restore_redo")
    assert "base_ref" in f.detail
    recover(run.dir, apply=True)
    assert (run.ws / "src/users.py").read_bytes() == NEW
    assert closing(run, lsn)[0]["recovered"] is True


def test_torn_with_no_image_that_hashes_right_is_left_for_a_human(run: Run) -> None:
    (run.ws / "src/users.py").write_bytes(b"edited by hand, never committed\n")
    lsn = run.file_intent("replace_symbol", "src/users.py", b"whatever\n", blobs=False, old="a", new="b")
    (run.ws / "src/users.py").write_bytes(b"torn")
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("torn", "ask_human")
    recover(run.dir, apply=True)
    assert (run.ws / "src/users.py").read_bytes() == b"torn"  # untouched
    assert closing(run, lsn) == []


def test_delete_and_create(run: Run) -> None:
    d = run.file_intent("delete_file", "README.md", None)
    c = run.file_intent("write_file", "new/dir/n.txt", b"n\n", content="n\n")
    plan = analyze(run.dir)
    assert [(f.lsn, f.finding, f.action) for f in plan.findings] == [
        (d, "not_applied", "redo"),
        (c, "not_applied", "redo"),
    ]
    recover(run.dir, apply=True)
    assert not (run.ws / "README.md").exists()
    assert (run.ws / "new/dir/n.txt").read_bytes() == b"n\n"
    assert sha256_file(run.ws / "README.md") == "absent"


def test_a_target_outside_the_workspace_is_never_touched(run: Run, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"mine\n")
    run.w.blobs.put(b"evil\n")
    run.w.append(
        "intent",
        tool="write_file",
        args={"path": "../outside.txt", "content": "evil\n"},
        target="../outside.txt",
        effect="fs",
        step=0,
        pre=h(b"mine\n"),
        post=h(b"evil\n"),
    )
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("in_doubt", "ask_human")
    recover(run.dir, apply=True)
    assert outside.read_bytes() == b"mine\n"


def test_keyed_external_call_is_reissued_with_the_same_key(run: Run, service: DemoService) -> None:
    lsn = run.external(service.url + "/releases", {"version": "1.1"})
    key = f"r1:{lsn}"
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("in_doubt", "reissue") and key in f.detail
    assert service.calls() == []
    plan = recover(run.dir, apply=True)
    [call] = service.calls()
    assert call["key"] == key and call["body"] == {"version": "1.1"} and call["effect"]
    [c] = closing(run, lsn)
    assert c["type"] == "commit" and c["result"]["status"] == 201 and c["recovered"] is True
    assert "committed" in plan.findings[0].outcome


def test_reissue_after_the_service_already_acted_does_not_act_twice(run: Run, service: DemoService) -> None:
    lsn = run.external(service.url + "/releases", {"version": "1.1"})
    service.handle("POST", "/releases", f"r1:{lsn}", b'{"version":"1.1"}')  # the crash came after the call
    recover(run.dir, apply=True)
    assert service.effects_by_key() == {f"r1:{lsn}": 1}
    [c] = closing(run, lsn)
    assert c["result"]["replayed"] is True


def test_reissue_to_an_unreachable_service_stays_in_doubt(run: Run, service: DemoService) -> None:
    url = service.url
    service.stop()
    lsn = run.external(url + "/releases", {"v": 1})
    plan = recover(run.dir, apply=True)
    f = plan.findings[0]
    assert (f.finding, f.action, f.done) == ("in_doubt", "reissue", False)
    assert "still in doubt" in f.outcome
    assert closing(run, lsn) == []


def test_unkeyed_external_call_and_command_are_in_doubt(run: Run) -> None:
    e = run.external("http://127.0.0.1:9/x", keyed=False)
    c = run.command(["touch", "ran.txt"])
    plan = recover(run.dir, apply=True)
    assert [(f.lsn, f.finding, f.action) for f in plan.findings] == [
        (e, "in_doubt", "ask_human"),
        (c, "in_doubt", "ask_human"),
    ]
    assert not (run.ws / "ran.txt").exists()
    assert closing(run, e) == closing(run, c) == []
    assert "ask a human whether lsn" in plan.brief


def test_idempotent_command_is_run_again(run: Run) -> None:
    c = run.command(["sh", "-c", "printf x >> ran.txt"], idempotent=True)
    f = only(analyze(run.dir))
    assert (f.finding, f.action) == ("not_applied", "redo")
    recover(run.dir, apply=True)
    assert (run.ws / "ran.txt").read_bytes() == b"x"
    [commit] = closing(run, c)
    assert commit["result"]["exit_code"] == 0


def test_unanswered_approval_is_asked_again_never_inferred(run: Run) -> None:
    req = run.w.append(
        "approval.request",
        tool="external_call",
        target="http://x/release",
        action={"tool": "external_call", "args": {}},
        reason="policy",
        step=3,
    )
    answered = run.w.append(
        "approval.request",
        tool="write_file",
        target="a",
        action={"tool": "write_file", "args": {}},
        reason="p",
        step=4,
    )
    run.w.append("approval.decision", ref=answered, decision="deny", approver="cli", reason="no")
    f = only(analyze(run.dir))
    assert (f.lsn, f.finding, f.action, f.step) == (req, "unanswered_approval", "ask_again", 3)
    recover(run.dir, apply=True)
    decisions = [r for r in run.records() if r["type"] in ("recovery", "approval.decision")]
    assert [(r["type"], r["ref"]) for r in decisions] == [("approval.decision", answered), ("recovery", req)]


def test_intent_lost_in_a_torn_tail_never_started(run: Run) -> None:
    a = run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    (run.ws / "a.txt").write_bytes(b"a\n")
    run.commit(a, h(b"a\n"))
    run.w.close()
    lost = run.w.next_lsn
    line = (
        b'{"v":1,"lsn":' + str(lost).encode() + b',"ts":"x","run":"r1","agent":"main","type":"intent",'
        b'"tool":"write_file","args":{"path":"b.txt","content":"b"},"target":"b.txt","effect":"fs","pre":"ab'
    )
    with open(run.journal, "ab") as fh:
        fh.write(line)
    plan = analyze(run.dir)
    f = only(plan)
    assert (f.lsn, f.tool, f.target, f.finding, f.action) == (
        lost,
        "write_file",
        "b.txt",
        "never_started",
        "none",
    )
    assert plan.committed_through == lost - 1
    assert "torn tail" in plan.brief
    plan = recover(run.dir, apply=True)
    assert scan(run.journal).intact
    recs = run.records()
    repaired = next(r for r in recs if r["type"] == "journal.recovered")
    [dec] = [r for r in recs if r["type"] == "recovery"]
    assert (dec["ref"], dec["lost_lsn"], dec["finding"], dec["action"]) == (
        repaired["lsn"],
        lost,
        "never_started",
        "none",
    )
    assert not (run.ws / "b.txt").exists()
    assert analyze(run.dir).findings == []  # answered: not reported again


def test_recovery_decision_none_resolves_its_intent(run: Run) -> None:
    lsn = run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    run.w.append(
        "recovery",
        ref=lsn,
        target="a.txt",
        tool="write_file",
        finding="in_doubt",
        action="none",
        detail="resolved by a human",
    )
    assert analyze(run.dir).findings == []


def test_corruption_is_refused(run: Run) -> None:
    import pytest
    from walkback.journal import JournalDamaged

    run.file_intent("write_file", "a.txt", b"a\n", content="a\n")
    run.w.append("test.result", cmd="x", exit_code=0, passed=True, output_tail="")
    run.w.close()
    lines = run.journal.read_bytes().splitlines(keepends=True)
    lines[-2] = lines[-2].replace(b'"a.txt"', b'"b.txt"', 1)  # the intent, with a valid record after it
    run.journal.write_bytes(b"".join(lines))
    with pytest.raises(JournalDamaged, match="corruption"):
        recover(run.dir, apply=True)
