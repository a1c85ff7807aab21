"""The OpenAI-compatible planner against a local fake /chat/completions server started here."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agenthelp import agent_run, of_type, records, scratch
from walkback.agent.actions import PlanError
from walkback.agent.approvals import approve_all
from walkback.agent.runs import PlannerOptions, start_run


class FakeModel:
    """Answers each chat request with the next scripted reply; keeps every request it got."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                reply = fake.replies.pop(0) if fake.replies else '{"done": true}'
                data = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": reply}}],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 7},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def model() -> Iterator[FakeModel]:
    fake = FakeModel([])
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def plan(fake: FakeModel) -> PlannerOptions:
    return PlannerOptions("openai", fake.base_url, "fake-1", "sk-test")


def test_model_actions_are_validated_journaled_and_executed(tmp_path: Path, model: FakeModel) -> None:
    model.replies = [
        "Sure! I will rename the symbol now.",
        '{"tool": "write_file", "args": {"path": "../outside.txt", "content": "x"}}',
        '```json\n{"tool": "replace_symbol", "args": {"path": "users/api.py", "old": "getUserById", '
        '"new": "fetchUser"}}\n```',
        '{"done": true}',
    ]
    ws = scratch("rename", tmp_path / "ws")
    result = start_run("rename", ws, approver=approve_all, run_dir=tmp_path / "run", planner=plan(model))
    assert result.status == "completed"
    assert not (tmp_path / "outside.txt").exists()
    assert "def fetchUser(uid)" in (ws / "users" / "api.py").read_text()

    recs = records(tmp_path / "run")
    assert recs[0]["planner"] == "openai:fake-1"
    assert recs[0]["planner_options"] == {"base_url": model.base_url, "model": "fake-1"}
    rejected = [r for r in of_type(recs, "plan") if "rejected" in r]
    assert [r["rejected"] for r in rejected] == [
        "Sure! I will rename the symbol now.",
        '{"tool": "write_file", "args": {"path": "../outside.txt", "content": "x"}}',
    ]
    assert "not a JSON object" in rejected[0]["error"] and "leaves the workspace" in rejected[1]["error"]
    (intent,) = of_type(recs, "intent")
    assert intent["tool"] == "replace_symbol" and intent["step"] == 0
    assert len(of_type(recs, "model.call")) == len(of_type(recs, "model.result")) == 4
    assert of_type(recs, "model.result")[0]["usage"] == {"input_tokens": 11, "output_tokens": 7}

    assert all(r["path"] == "/v1/chat/completions" and r["auth"] == "Bearer sk-test" for r in model.requests)
    assert model.requests[0]["body"]["model"] == "fake-1"
    feedback = model.requests[1]["body"]["messages"][-1]
    assert feedback["role"] == "user" and feedback["content"].startswith("Rejected: not a JSON object")
    last = model.requests[3]["body"]["messages"][-1]["content"]
    assert last.startswith("Step 0 result:") and '"ok":true' in last


def test_three_invalid_outputs_in_a_row_fail_the_run_without_acting(tmp_path: Path, model: FakeModel) -> None:
    model.replies = ['{"tool": "rm", "args": {}}'] * 3
    ws = scratch("rename", tmp_path / "ws")
    with pytest.raises(PlanError, match="3 invalid actions in a row at step 0"):
        start_run("rename", ws, approver=approve_all, run_dir=tmp_path / "run", planner=plan(model))
    recs = records(tmp_path / "run")
    assert len([r for r in of_type(recs, "plan") if "rejected" in r]) == 3
    assert of_type(recs, "intent") == [] and recs[-1]["status"] == "failed"


def test_the_cli_drives_the_model_planner(tmp_path: Path, model: FakeModel) -> None:
    model.replies = ['{"tool": "ensure_line", "args": {"path": "README.md", "line": "edited by a model"}}']
    ws = scratch("rename", tmp_path / "ws")
    p = agent_run(
        "rename",
        ws,
        tmp_path / "run",
        "--planner",
        "openai",
        "--base-url",
        model.base_url,
        "--model",
        "fake-1",
    )
    assert p.returncode == 0, p.stderr
    assert (ws / "README.md").read_text().endswith("edited by a model\n")
