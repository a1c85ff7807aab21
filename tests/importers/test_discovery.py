"""Finding sessions where the agents keep them: a fake home holding copies of corpus files in the
agents' real layouts, each root moved by its documented override, and ``walkback sessions``."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from walkback.importers.discovery import counted, find_sessions, roots, summarize
from walkback.journal.testing import write_run

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
OLD = 1_600_000_000
OVERRIDES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "WALKBACK_HOME")
CODEX_FILE = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"


def put(source: str, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / source, target)
    os.utime(target, (OLD, OLD))
    return target


@pytest.fixture
def machine(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A home with one session per layout; Codex and Claude moved by their overrides."""
    home = tmp_path / "home"
    claude = tmp_path / "claude-config"
    codex = tmp_path / "codex-home"
    project = claude / "projects" / "-home-u-debugtest"
    put(
        "claude-code/vscode-copilot-chat/50a7220d-7250-46f3-b38e-b716ce25032e.jsonl",
        project / "50a7220d.jsonl",
    )
    put(
        "claude-code/vscode-copilot-chat/50a7220d-7250-46f3-b38e-b716ce25032e/subagents/agent-a21e2f5.jsonl",
        project / "50a7220d" / "subagents" / "agent-a21e2f5.jsonl",
    )
    put(f"codex/codemie/{CODEX_FILE}", codex / "sessions" / "2026" / "05" / "11" / CODEX_FILE)
    day = codex / "sessions" / "2025" / "09" / "19"
    put("codex/vibecodingtracker/codex.jsonl", day / "rollout-2025-09-19T09-02-12-01996135.jsonl")
    child = {
        "timestamp": "2025-09-19T09:03:00.000Z",
        "type": "session_meta",
        "payload": {
            "id": "kid",
            "source": {
                "subagent": {"thread_spawn": {"parent_thread_id": "01996135-afde-7911-97f0-d863511eca56"}}
            },
        },
    }
    (day / "rollout-2025-09-19T09-03-00-kid.jsonl").write_bytes(orjson.dumps(child) + b"\n")
    chats = home / ".gemini" / "tmp" / "9da8b3df" / "chats"
    put("gemini-cli/vibecodingtracker/gemini.jsonl", chats / "session-2026-04-23T12-52-0ab84937.jsonl")
    put("gemini-cli/vibecodingtracker/session-legacy.json", chats / "session-2026-03-27T10-19-8a20078e.json")
    (chats.parent / ".project_root").write_text("/home/wei/repo/discordbot\n")
    copilot = home / ".copilot"
    put(
        "copilot-cli/vibecodingtracker/copilot-events.jsonl",
        copilot / "session-state" / "96ef38f0" / "events.jsonl",
    )
    put(
        "copilot-cli/vibecodingtracker/copilot-legacy.json",
        copilot / "history-session-state" / "0b2a81da.json",
    )
    write_run(home / ".walkback" / "runs" / "r1", steps=2)
    os.utime(home / ".walkback" / "runs" / "r1" / "journal.jsonl", (OLD, OLD))
    env = {"CLAUDE_CONFIG_DIR": str(claude), "CODEX_HOME": str(codex)}
    return env, home


def test_the_roots_honour_every_documented_override(tmp_path: Path) -> None:
    env = {k: str(tmp_path / k) for k in OVERRIDES}
    assert roots(env, tmp_path / "home") == {
        "claude-code": tmp_path / "CLAUDE_CONFIG_DIR",
        "codex": tmp_path / "CODEX_HOME",
        "gemini-cli": tmp_path / "GEMINI_CLI_HOME" / ".gemini",
        "copilot-cli": tmp_path / "COPILOT_HOME",
        "walkback": tmp_path / "WALKBACK_HOME",
    }
    assert roots({}, tmp_path)["codex"] == tmp_path / ".codex"


def test_every_layout_is_found_newest_first(machine: tuple[dict[str, str], Path]) -> None:
    env, home = machine
    found = find_sessions(env, home)
    assert [(s.agent, s.path.name) for s in found] == [
        ("walkback", "r1"),
        ("codex", CODEX_FILE),
        ("copilot-cli", "events.jsonl"),
        ("gemini-cli", "session-2026-04-23T12-52-0ab84937.jsonl"),
        ("gemini-cli", "session-2026-03-27T10-19-8a20078e.json"),
        ("claude-code", "50a7220d.jsonl"),
        ("copilot-cli", "0b2a81da.json"),
        ("codex", "rollout-2025-09-19T09-02-12-01996135.jsonl"),
    ]  # the subagent transcript and the subagent rollout belong to their parents' sessions
    by = {s.path.name: s for s in found}
    codex = by[CODEX_FILE]
    assert (codex.workspace, codex.task, codex.status, codex.records) == (
        "/Users/Sample_User/repos/codemie-ai/codemie-code",
        "show tools",
        "completed",
        386,
    )
    assert codex.duration is not None and 1083 < codex.duration < 1084
    claude = by["50a7220d.jsonl"]
    assert claude.workspace == "/Users/roblou/code/debugtest" and claude.task.startswith("use a subagent")
    gem = by["session-2026-04-23T12-52-0ab84937.jsonl"]
    assert gem.workspace == "/home/wei/repo/discordbot" and gem.records == 28 and gem.status == "unknown"
    assert by["session-2026-03-27T10-19-8a20078e.json"].records == 4
    assert (
        by["events.jsonl"].workspace == "/home/wei/repo/VibeCodingTracker"
        and by["events.jsonl"].status == "completed"
    )
    run = by["r1"]
    assert (run.status, run.task, run.workspace) == (
        "completed",
        "rename getUserById",
        "/ws",
    ) and run.records > 2


def test_a_session_still_being_written_is_running(machine: tuple[dict[str, str], Path]) -> None:
    env, home = machine
    path = Path(env["CODEX_HOME"]) / "sessions" / "2026" / "05" / "11" / CODEX_FILE
    os.utime(path)
    assert summarize("codex", path).status == "completed"  # fresh on disk, old inside: a copy
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    with open(path, "ab") as f:
        f.write(orjson.dumps({"timestamp": now, "type": "event_msg", "payload": {"type": "x"}}) + b"\n")
    assert summarize("codex", path).status == "running"


def test_a_codex_turn_that_started_and_never_ended_crashed(tmp_path: Path) -> None:
    path = tmp_path / "rollout-x.jsonl"
    recs = [
        {"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/w"}},
        {"timestamp": "2026-01-01T10:00:01Z", "type": "event_msg", "payload": {"type": "task_started"}},
    ]
    path.write_bytes(b"\n".join(map(orjson.dumps, recs)) + b"\n")
    os.utime(path, (OLD, OLD))
    assert summarize("codex", path).status == "crashed"


def test_counting_reads_each_session_whole(machine: tuple[dict[str, str], Path]) -> None:
    env, home = machine
    codex = next(s for s in find_sessions(env, home) if s.path.name == CODEX_FILE)
    assert codex.events is None
    full = counted(codex)
    assert full.events == 386 and full.status == "completed"


def live_in(machine: tuple[dict[str, str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's HOME and overrides are the fake machine's (no other override set)."""
    env, home = machine
    monkeypatch.setenv("HOME", str(home))
    for k in OVERRIDES:
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)


def test_the_sessions_command_lists_them(
    machine: tuple[dict[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    live_in(machine, monkeypatch)
    runner = CliRunner()
    listed = runner.invoke(cli, ["sessions", "--json"])
    assert listed.exit_code == 0, listed.output
    data = orjson.loads(listed.output)
    assert len(data) == 8 and set(data[0]) == {
        "agent",
        "path",
        "workspace",
        "task",
        "start",
        "end",
        "duration",
        "records",
        "events",
        "status",
        "journal",
    }
    assert data[1]["start"] == "2026-05-11T08:26:55.042Z" and data[1]["events"] is None
    text = runner.invoke(cli, ["sessions"])
    assert text.exit_code == 0 and "show tools" in text.output and "codex" in text.output


def test_no_sessions_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live_in(({}, tmp_path), monkeypatch)
    result = CliRunner().invoke(cli, ["sessions"])
    assert result.exit_code == 0 and "no sessions found" in result.output
    assert orjson.loads(CliRunner().invoke(cli, ["sessions", "--json"]).output) == []


def test_view_without_a_path_opens_the_sessions_found(
    machine: tuple[dict[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from walkback._cli.view import on_this_machine

    live_in(machine, monkeypatch)
    assert [p.name for p in on_this_machine()][:2] == ["r1", CODEX_FILE]
    live_in(({}, machine[1] / "nowhere"), monkeypatch)
    result = CliRunner().invoke(cli, ["view", "--no-open"])
    assert result.exit_code == 2 and "no sessions found on this machine" in result.output
