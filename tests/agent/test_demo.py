"""``walkback demo --no-open --dir DIR`` end to end, as a script would run it."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
from agenthelp import of_type, records, walkback


def test_the_demo_kills_recovers_and_finishes(tmp_path: Path) -> None:
    base = tmp_path / "demo"
    t0 = time.monotonic()
    p = walkback("demo", "--no-open", "--dir", str(base), timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    assert took < 60
    err, out = p.stderr, p.stdout
    for step in (
        "1. scratch git repository",
        "2. demo release service",
        "3. agent run",
        "4. kill -9",
        "5. what recovery finds",
        "resume brief:",
        "6. agent resume",
        "7. run completed",
    ):
        assert step in err, f"missing progress line {step!r}"
    assert err.index("4. kill -9") < err.index("6. agent resume") < err.index("7. run completed")
    run_dir = base / "runs" / "demo"
    assert "demo finished in" in out and "status      completed (recovered)" in out
    assert f"walkback view {run_dir}" in out

    recs = records(run_dir)
    assert recs[-1]["type"] == "run.end" and recs[-1]["status"] == "completed"
    assert len(of_type(recs, "agent.spawn")) == 3 and len(of_type(recs, "agent.end")) == 3
    assert [d["approver"] for d in of_type(recs, "approval.decision")] == ["policy:policy.json"]
    for child in ("auth", "billing", "search"):
        c = records(run_dir / "agents" / child)
        assert len(of_type(c, "run.start")) == 1 and c[-1]["status"] == "completed"
    calls = [orjson.loads(x) for x in (base / "service" / "calls.jsonl").read_bytes().splitlines()]
    assert [c["effect"] for c in calls] == [True]
    for journal in [run_dir, *sorted((run_dir / "agents").iterdir())]:
        assert walkback("check", str(journal)).returncode == 0
    status = walkback("show", "--json", str(run_dir))
    assert orjson.loads(status.stdout)["status"] == "completed"
