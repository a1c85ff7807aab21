"""Subagent journals named by ``agent.spawn`` are recovered too, and reported with their agent id."""

from __future__ import annotations

from pathlib import Path

import orjson
from recovery_helpers import Run, h, hold_lock
from walkback.journal import JournalWriter
from walkback.journal.recovery import analyze, recover

AUTH = b"SESSION_TTL_SECONDS = 60\n"


def spawn(run: Run, agent: str, *, header_ws: Path | None = None) -> tuple[Path, JournalWriter]:
    lsn = run.w.next_lsn
    child_dir = run.dir / "agents" / agent
    run.w.append(
        "agent.spawn",
        child_run=f"r1:{lsn}",
        child_agent=agent,
        child_dir=f"agents/{agent}",
        task=f"{agent} task",
        step=1,
    )
    w = JournalWriter.create(
        child_dir,
        task=f"{agent} task",
        run=f"r1:{lsn}",
        agent=agent,
        parent={"run": "r1", "agent": "main", "lsn": lsn, "dir": str(run.dir)},
        workspace=str(header_ws or run.ws),
        base_ref=run.base,
    )
    return child_dir, w


def child_intent(w: JournalWriter, ws: Path, path: str, data: bytes) -> int:
    old = (ws / path).read_bytes() if (ws / path).exists() else None
    for d in (old, data):
        if d is not None:
            w.blobs.put(d)
    return w.append(
        "intent", tool="write_file", args={"path": path, "content": data.decode()}, target=path,
        effect="fs", step=0, pre=h(old), post=h(data),
    )  # fmt: skip


def test_child_findings_are_reported_with_the_agent_id_and_recovered(run: Run) -> None:
    _, w = spawn(run, "auth")
    lsn = child_intent(w, run.ws, "auth.py", AUTH)
    w.close()
    run.w.close()
    plan = analyze(run.dir)
    assert plan.findings == []
    [child] = plan.children
    assert child.agent == "auth" and child.run == "r1:1"
    [f] = plan.all_findings()
    assert (f.agent, f.lsn, f.finding, f.action) == ("auth", lsn, "not_applied", "redo")
    [jf] = plan.to_json()["findings"]
    assert jf["detail"].startswith("agent auth: ") and jf["lsn"] == lsn
    assert "agent auth: Committed through lsn 0." in plan.brief
    assert f"redo agent auth: lsn {lsn}" not in plan.brief and f"agent auth: redo lsn {lsn}" in plan.brief
    assert plan.brief.endswith(f"then continue at lsn {plan.next_lsn} of agent main's journal.")
    recover(run.dir, apply=True)
    assert (run.ws / "auth.py").read_bytes() == AUTH
    recs = [orjson.loads(x) for x in (run.dir / "agents/auth/journal.jsonl").read_bytes().splitlines()]
    assert recs[-1]["type"] == "commit" and recs[-1]["agent"] == "auth" and recs[-1]["recovered"] is True


def test_child_workspace_follows_the_parent_workspace_when_it_moved(run: Run, tmp_path: Path) -> None:
    old_ws = tmp_path / "where-it-was"
    w0 = JournalWriter.create(
        tmp_path / "moved", task="t", run="m1", workspace=str(old_ws), base_ref=run.base
    )
    child = tmp_path / "moved" / "agents" / "a"
    w0.append("agent.spawn", child_run="m1:1", child_agent="a", child_dir="agents/a", task="t", step=0)
    w = JournalWriter.create(child, task="t", run="m1:1", agent="a", workspace=str(old_ws / "sub"))
    (run.ws / "sub").mkdir()
    child_intent(w, run.ws / "sub", "x.txt", b"x\n")
    w.close()
    w0.close()
    recover(tmp_path / "moved", workspace=run.ws, apply=True)
    assert (run.ws / "sub" / "x.txt").read_bytes() == b"x\n"
    assert not old_ws.exists()


def test_a_child_dir_leaving_the_run_dir_is_ignored(run: Run, tmp_path: Path) -> None:
    evil = tmp_path / "evil"
    w = JournalWriter.create(evil, task="t", run="e", workspace=str(run.ws))
    child_intent(w, run.ws, "pwned.txt", b"x\n")
    w.close()
    run.w.append("agent.spawn", child_run="r1:1", child_agent="x", child_dir="../../evil", task="t", step=0)
    run.w.close()
    plan = recover(run.dir, apply=True)
    assert plan.children == [] and not (run.ws / "pwned.txt").exists()
    assert "Agent x (spawned at lsn 1) has no journal yet." in plan.brief


def test_a_live_child_is_left_alone(run: Run) -> None:
    child_dir, w = spawn(run, "search")
    child_intent(w, run.ws, "search.py", b"s\n")
    w.close()
    run.w.close()
    with hold_lock(child_dir):
        plan = recover(run.dir, apply=True)
    assert plan.children[0].live and plan.all_findings() == []
    assert "the run is live" in plan.brief
    assert not (run.ws / "search.py").exists()
