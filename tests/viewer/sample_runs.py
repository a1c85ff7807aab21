"""Real journals for the viewer tests, written with journal.JournalWriter (no hand-made JSON).

``build_run`` writes a run directory with everything the viewer shows: a plan, model text, file
intents with pre/post blobs and verified commits, a failure, an approval that was granted and
gated an action, one that was denied, a subagent with its own journal in ``agents/<id>/``, a
checkpoint, a test result, optionally a recovery record with a recovered commit, a pending intent
(crash) and a torn tail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from walkback.journal import JournalWriter
from walkback.journal.record import sha256_bytes

XSS = {
    "task": 'Fix <img src=x onerror="window.__xss=1"> & <script>window.__xss=2</script>',
    "file": 'src/"><svg onload=window.__xss=3>.py',
    "arg": "<script>window.__xss=4</script>",
    "result": '<img src=x onerror="window.__xss=5">',
    "model": "Sure!\n```\n</script><script>window.__xss=6</script>\n```\n"
    "<b onmouseover=window.__xss=7>bold</b>",
    "agent": "<i onclick=window.__xss=8>helper</i>",
    "reason": "<a href=javascript:window.__xss=9>click</a>",
    "dir": "run-<img src=x onerror=window.__xss=10>",
}

APP_V1 = b"def get_user_by_id(uid):\n    return db.get(uid)\n\n\ndef main():\n    print(get_user_by_id(1))\n"
APP_V2 = b"def fetch_user(uid):\n    return db.get(uid)\n\n\ndef main():\n    print(fetch_user(1))\n"
README = b"# demo\n"


@dataclass
class Run:
    """Where the run was written and the lsns tests point at."""

    dir: Path
    workspace: Path
    lsn: dict[str, int] = field(default_factory=dict)

    @property
    def journal(self) -> Path:
        return self.dir / "journal.jsonl"


def _file_intent(
    w: JournalWriter,
    *,
    tool: str,
    target: str,
    before: bytes | None,
    after: bytes | None,
    step: int,
    approval: int | None = None,
    **args: object,
) -> int:
    pre = w.blobs.put(before) if before is not None else "absent"
    post = w.blobs.put(after) if after is not None else "absent"
    gate = {"approval": approval} if approval is not None else {}
    return w.append(
        "intent",
        tool=tool,
        args={"path": target, **args},
        target=target,
        effect="fs",
        step=step,
        pre=pre,
        post=post,
        **gate,
    )


def _commit(
    w: JournalWriter, ref: int, after: bytes | None, *, check: str | None = None, **extra: object
) -> int:
    post = sha256_bytes(after) if after is not None else "absent"
    verified = {"post": True, "check": {"cmd": check, "exit_code": 0} if check else None}
    return w.append("commit", ref=ref, post=post, verified=verified, **extra)


def build_run(
    root: Path,
    *,
    name: str = "run-a",
    xss: bool = False,
    crashed: bool = True,
    recovered: bool = False,
    torn: bool = False,
    child: bool = True,
) -> Run:
    """Write a run directory under ``root`` and its workspace; return where things are."""
    t = (
        XSS
        if xss
        else {
            "task": "Rename get_user_by_id to fetch_user",
            "file": "src/app.py",
            "arg": "fetch_user",
            "result": "1 passed",
            "model": "I will rename the function and update its callers.",
            "agent": "helper",
            "reason": "touches the public API",
        }
    )
    ws = root / f"{name}-workspace"
    (ws / "src").mkdir(parents=True, exist_ok=True)
    run = Run(dir=root / name, workspace=ws)
    w = JournalWriter.create(
        run.dir, task=t["task"], run=f"r-{name}", workspace=str(ws), base_ref="0" * 40, planner="scripted"
    )
    L = run.lsn
    w.append("plan", steps=["create app", "rename", "readme", "tests"])
    w.append("model.call", model="scripted", messages=[{"role": "user", "content": t["task"]}])
    L["model"] = w.append(
        "model.result", model="scripted", output=t["model"], usage={"input_tokens": 12, "output_tokens": 34}
    )
    L["create"] = _file_intent(
        w, tool="write_file", target=t["file"], before=None, after=APP_V1, step=0, content=APP_V1.decode()
    )
    L["create_commit"] = _commit(w, L["create"], APP_V1, check="python -m py_compile app.py")
    L["approval"] = w.append(
        "approval.request",
        tool="replace_symbol",
        target=t["file"],
        action={
            "tool": "replace_symbol",
            "args": {"path": t["file"], "old": "get_user_by_id", "new": t["arg"]},
        },
        reason=t["reason"],
        step=1,
    )
    L["decision"] = w.append(
        "approval.decision", ref=L["approval"], decision="approve", approver="alice", reason="ok"
    )
    L["rename"] = _file_intent(
        w,
        tool="replace_symbol",
        target=t["file"],
        before=APP_V1,
        after=APP_V2,
        step=1,
        approval=L["approval"],
        old="get_user_by_id",
        new=t["arg"],
    )
    L["rename_commit"] = _commit(w, L["rename"], APP_V2, result={"output": t["result"]})
    L["deny"] = w.append(
        "approval.request",
        tool="delete_file",
        target="README.md",
        action={"tool": "delete_file", "args": {"path": "README.md"}},
        reason="cleanup",
        step=2,
    )
    w.append("approval.decision", ref=L["deny"], decision="deny", approver="bob", reason="keep the readme")
    L["fail"] = _file_intent(
        w, tool="ensure_line", target="README.md", before=None, after=README, step=2, line="# demo"
    )
    w.append("fail", ref=L["fail"], error=f"permission denied: {t['result']}")
    if child:
        spawn = w.next_lsn
        agent = t["agent"]
        L["spawn"] = w.append(
            "agent.spawn",
            child_run=f"r-{name}:{spawn}",
            child_agent=agent,
            child_dir="agents/helper",
            task="write tests",
            step=3,
        )
        cw = JournalWriter.create(
            run.dir / "agents" / "helper",
            task="write tests",
            run=f"r-{name}:{spawn}",
            agent=agent,
            parent={"run": f"r-{name}", "agent": "main", "lsn": spawn, "dir": "agents/helper"},
        )
        test_body = b"def test_fetch():\n    assert True\n"
        ci = _file_intent(
            cw,
            tool="write_file",
            target="tests/test_app.py",
            before=None,
            after=test_body,
            step=0,
            content=test_body.decode(),
        )
        _commit(cw, ci, test_body)
        cw.append("test.result", cmd="pytest -q", exit_code=0, passed=True, output_tail=t["result"])
        cw.append("run.end", status="completed")
        cw.close()
        w.append(
            "agent.end", ref=L["spawn"], child_agent=agent, child_run=f"r-{name}:{spawn}", outcome="completed"
        )
    w.append("checkpoint", git="1" * 40, branch=f"walkback/r-{name}", covers_lsn=w.next_lsn)
    L["test"] = w.append("test.result", cmd="pytest -q", exit_code=1, passed=False, output_tail=t["result"])
    L["pending"] = _file_intent(
        w, tool="write_file", target="docs/notes.md", before=None, after=b"notes\n", step=4, content="notes\n"
    )
    if recovered:
        L["recovery"] = w.append(
            "recovery",
            ref=L["pending"],
            target="docs/notes.md",
            tool="write_file",
            finding="not_applied",
            action="redo",
            detail=t["result"],
            brief=f"committed through lsn {L['pending'] - 1}; redo {L['pending']}",
        )
        L["recovered_commit"] = _commit(w, L["pending"], b"notes\n", recovered=True)
    if not crashed:
        w.append("run.end", status="completed")
    w.close()
    (ws / "src" / "app.py").write_bytes(APP_V2)
    if torn:
        with open(run.journal, "ab") as f:
            f.write(
                b'{"v":1,"lsn":' + str(w.next_lsn).encode() + b',"ts":"2025-01-01T00:00:00Z","type":"inte'
            )
    return run


def grow(run: Run, n: int) -> list[int]:
    """Append ``n`` model results to a finished-or-not run (a live agent writing)."""
    w = JournalWriter.open(run.journal)
    out = [w.append("model.result", model="scripted", output=f"live event {k}") for k in range(n)]
    w.close()
    return out
