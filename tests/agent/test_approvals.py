"""Approvals: policy per tool/target, standing answers, denial, and re-asking after a crash."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agenthelp import ROOT, agent_run, of_type, records, scratch
from walkback.agent.approvals import ApprovalPending, ApprovalRequest, Policy, approve_all, deny_all
from walkback.agent.demo_service import DemoService
from walkback.agent.runs import resume_run, start_run
from walkback.journal.errors import AgentError


def test_first_matching_rule_decides() -> None:
    policy = Policy.from_json(
        {
            "rules": [
                {"tool": "external_call", "target": "http://127.0.0.1:*/status/*", "approval": "none"},
                {"tool": "external_call"},
                {"tool": "delete_file", "target": "src/*", "decision": "deny", "reason": "keep sources"},
            ]
        },
        source="policy:p.json",
    )
    assert policy.rule_for("external_call", "http://127.0.0.1:8/status/200") is None
    assert policy.rule_for("external_call", "http://127.0.0.1:8/releases") is not None
    rule = policy.rule_for("delete_file", "src/a.py")
    assert rule is not None and rule.decision == "deny" and rule.source == "policy:p.json"
    assert policy.rule_for("delete_file", "docs/a.md") is None
    assert policy.rule_for("write_file", "src/a.py") is None


def test_a_bad_policy_file_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text('{"rules": [\n  {"tool": "x",}\n]}')
    with pytest.raises(AgentError) as e:
        Policy.load(bad)
    assert str(e.value).startswith(f"{bad}:2: policy file is not valid JSON")
    bad.write_text('{"rules": [{"tool": "x", "decision": "maybe"}]}')
    with pytest.raises(AgentError, match="decision must be 'approve' or 'deny'"):
        Policy.load(bad)


def release(tmp: Path, service: DemoService, **kw: object) -> str:
    ws = scratch("release", tmp / "ws")
    return start_run("release", ws, run_dir=tmp / "run", service_url=service.url, **kw).status  # type: ignore[arg-type]


def test_a_standing_answer_in_a_policy_file_gates_each_call(tmp_path: Path, service: DemoService) -> None:
    pol = tmp_path / "policy.json"
    pol.write_text(json.dumps({"rules": [{"tool": "external_call", "decision": "approve"}]}))
    assert release(tmp_path, service, approver=deny_all, policy_file=pol) == "completed"
    recs = records(tmp_path / "run")
    requests, decisions = of_type(recs, "approval.request"), of_type(recs, "approval.decision")
    calls = [i for i in of_type(recs, "intent") if i["tool"] == "external_call"]
    assert len(requests) == len(decisions) == len(calls) == 2
    for req, dec, call in zip(requests, decisions, calls, strict=True):
        assert req["lsn"] < dec["lsn"] < call["lsn"]
        assert dec["ref"] == req["lsn"] and call["approval"] == req["lsn"]
        assert dec["decision"] == "approve" and dec["approver"] == "policy:policy.json"
        assert (
            req["action"] == {"tool": "external_call", "args": call["args"]} and req["step"] == call["step"]
        )
    assert len(service.effects_by_key()) == 2


def test_a_denied_action_is_skipped_and_the_run_goes_on(tmp_path: Path, service: DemoService) -> None:
    assert release(tmp_path, service, approver=deny_all) == "completed"
    recs = records(tmp_path / "run")
    assert [d["decision"] for d in of_type(recs, "approval.decision")] == ["deny", "deny"]
    assert all(i["tool"] != "external_call" for i in of_type(recs, "intent"))
    assert service.calls() == []
    assert "- 1.2.0 published and announced" in (tmp_path / "ws" / "CHANGELOG.md").read_text()


def test_without_an_approver_the_run_stops_with_the_request_unanswered(
    tmp_path: Path, service: DemoService
) -> None:
    with pytest.raises(ApprovalPending):
        release(tmp_path, service, approver=lambda req: None)
    recs = records(tmp_path / "run")
    assert len(of_type(recs, "approval.request")) == 1 and of_type(recs, "approval.decision") == []
    assert of_type(recs, "run.end") == [] and service.calls() == []


def test_an_unanswered_approval_is_asked_again_after_a_crash_never_inferred(
    tmp_path: Path, service: DemoService
) -> None:
    ws = scratch("release", tmp_path / "ws")
    run_dir = tmp_path / "run"
    p = agent_run(
        "release", ws, run_dir, service=service.url, env={"WALKBACK_FAILPOINT": "approval.after_request"}
    )
    assert p.returncode == -9, p.stderr
    (req,) = of_type(records(run_dir), "approval.request")
    assert of_type(records(run_dir), "approval.decision") == []

    # nobody to ask (no terminal, no flag): still unanswered, nothing executed
    asked: list[ApprovalRequest] = []
    with pytest.raises(ApprovalPending):
        resume_run(run_dir, approver=lambda r: asked.append(r) or None)  # type: ignore[func-returns-value]
    assert [r.lsn for r in asked] == [req["lsn"]]
    assert of_type(records(run_dir), "approval.decision") == [] and service.calls() == []

    result = resume_run(run_dir, approver=approve_all)
    assert result.status == "completed"
    recs = records(run_dir)
    first = of_type(recs, "approval.decision")[0]
    assert first["ref"] == req["lsn"] and first["approver"] == "cli:--approve-all"
    assert len([r for r in of_type(recs, "approval.request") if r["step"] == req["step"]]) == 1
    call = next(i for i in of_type(recs, "intent") if i["step"] == req["step"])
    assert call["approval"] == req["lsn"]
    assert all(n == 1 for n in service.effects_by_key().values()) and len(service.effects_by_key()) == 2


def test_the_terminal_prompt_answers_and_is_journaled_as_a_human(
    tmp_path: Path, service: DemoService
) -> None:
    ws = scratch("release", tmp_path / "ws")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "walkback",
            "agent",
            "run",
            "release",
            "--workspace",
            str(ws),
            "--run-dir",
            str(tmp_path / "run"),
            "--service",
            service.url,
        ],
        cwd=ROOT,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=os.environ.copy(),
    )
    os.close(slave)
    answers = [b"y\n", b"ship it\n", b"n\n", b"\n"]
    seen = b""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
            prompts = seen.count(b"approve?") + seen.count(b"reason (optional)")
            while answers and 4 - len(answers) < prompts:
                os.write(master, answers.pop(0))
    proc.wait(timeout=30)
    os.close(master)
    assert proc.returncode == 0, seen.decode(errors="replace")
    decisions = of_type(records(tmp_path / "run"), "approval.decision")
    assert [(d["decision"], d["reason"]) for d in decisions] == [("approve", "ship it"), ("deny", "")]
    assert all(d["approver"].startswith("prompt:") for d in decisions)
    assert len(service.effects_by_key()) == 1
