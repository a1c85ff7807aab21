"""One session, two sources: an agent's transcript and its hook journal, merged by call id.

Real Claude Code and Codex transcripts from the corpus (their own session ids and call ids) and
transcripts written here record by record; the hook journals are written by the real journal
writer in the contract's shape (``hookjournal_helpers``)."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hookjournal_helpers import HookJournal, Transcript, git, h, make_repo
from walkback.importers import load
from walkback.importers.hooked import journal_for
from walkback.journal.hookpaths import input_digest, safe_id
from walkback.timeline.details import Checkpoint, ToolCall, ToolResult
from walkback.timeline.views import file_change

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
HELLO = CORPUS / "claude-code" / "claude-reliability" / "hello-world-script.jsonl"
HELLO_SESSION = "de3b8b19-5bc0-4a2a-934a-1b6806567e25"
HELLO_WRITE, HELLO_BASH = "toolu_01R3SZZYuAq6mou5RqHE4rzF", "toolu_01GNvoSEyj9jAsgFtJBduDPp"
SCRIPT = b'#!/bin/bash\necho "Hello world"\n'
CODEX = (
    CORPUS / "codex" / "localpush" / "rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"
)
GEMINI = CORPUS / "gemini-cli" / "vibecodingtracker" / "gemini.jsonl"
GEMINI_SESSION = "0ab84937-9fe7-4284-986a-33c832af0b6a"
CODEX_SESSION, CODEX_CALL = "019c8a4c-ed82-79a1-aa28-7738fc5ab61a", "call_zC8Bb98Ju4Ft4evnpeMpIu85"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "wbhome"
    monkeypatch.setenv("WALKBACK_HOME", str(home))
    return home


def _call(session, call_id: str) -> int:  # type: ignore[no-untyped-def]
    return next(i for i in session.indices_where(kind="tool_call") if session.detail(i).call_id == call_id)


def _hello(tmp_path: Path, home: Path) -> tuple[Path, HookJournal]:
    """The corpus session copied, with the journal its hooks would have written."""
    transcript = tmp_path / "hello.jsonl"
    shutil.copy(HELLO, transcript)
    ws = tmp_path / "ws"
    make_repo(ws, {"README.md": b"# hi\n"})
    hj = HookJournal.create(home, HELLO_SESSION, ws, transcript=transcript)
    lsn = hj.file_intent(
        HELLO_WRITE, "Write", {"file_path": "hello.sh", "content": SCRIPT.decode()}, "hello.sh", SCRIPT
    )
    (ws / "hello.sh").write_bytes(SCRIPT)
    hj.commit(lsn, HELLO_WRITE, h(SCRIPT), "hello.sh")
    bash = hj.shell_intent(HELLO_BASH, "chmod +x hello.sh && ./hello.sh")
    hj.commit(bash, HELLO_BASH, result={"exit_code": 0, "output_tail": "Hello world"})
    hj.close()
    return transcript, hj


def test_the_journal_is_found_by_agent_and_session_id(tmp_path: Path, home: Path) -> None:
    transcript, hj = _hello(tmp_path, home)
    s = load(transcript)
    assert journal_for(s) == hj.path and s.hooked is not None and s.hooked.journal == hj.path
    assert s.hooked.linked == 2, "both of the transcript's calls are joined to their intents"
    assert len(s.sources) == 2 and s.files()[-1] == hj.path, "the viewer follows both files"
    assert safe_id("a/b:c") == "a_b_c"
    assert load(HELLO, hooked=False).status == "completed" and s.status == "running", (
        "its hooks wrote just now"
    )


def test_the_conversation_is_the_transcripts_the_hashes_the_journals(tmp_path: Path, home: Path) -> None:
    transcript, _ = _hello(tmp_path, home)
    plain_kinds = load(HELLO).kinds()
    s = load(transcript)
    assert s.kinds() == plain_kinds, "the journal's intents and commits of known calls add no events"
    write = _call(s, HELLO_WRITE)
    call = s.detail(write)
    assert isinstance(call, ToolCall) and call.edit is not None
    assert (call.edit.pre, call.edit.post) == ("absent", h(SCRIPT))
    fc = file_change(s, write)
    assert fc is not None and fc.pre == "absent" and fc.post == h(SCRIPT) and fc.post_text == SCRIPT
    res = s.completion_of(write)
    assert res is not None
    result = s.detail(res)
    assert isinstance(result, ToolResult) and result.verification == "hook journal: post hash verified"
    bash = s.detail(s.completion_of(_call(s, HELLO_BASH)) or -1)
    assert (
        isinstance(bash, ToolResult) and bash.output == "Hello world" and "hook journal" in bash.verification
    )


def test_a_mismatch_is_recorded_and_shown(tmp_path: Path, home: Path) -> None:
    """A formatter rewrote the file after the tool: the observed hash is not the expected one."""
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": b"x=1\n"})
    t = Transcript(tmp_path / "t.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    t.prompt("format it")
    args = {"file_path": str(ws / "a.py"), "old_string": "x=1", "new_string": "x=2"}
    t.tool_use("toolu_m", "Edit", args)
    lsn = hj.file_intent("toolu_m", "Edit", args, "a.py", b"x=2\n")
    (ws / "a.py").write_bytes(b"x = 2\n")  # the edit, then a formatter
    hj.commit(lsn, "toolu_m", h(b"x=2\n"), "a.py")
    t.tool_result("toolu_m", "The file a.py has been updated.")
    hj.close()
    s = load(t.path)
    assert s.hooked is not None and s.hooked.mismatches == [
        {"call": "toolu_m", "target": "a.py", "expected": h(b"x=2\n"), "observed": h(b"x = 2\n")}
    ]
    fc = file_change(s, _call(s, "toolu_m"))
    assert fc is not None and fc.edit.post == h(b"x = 2\n"), "the change ends at what the file was"
    result = s.detail(fc.result or -1)
    assert isinstance(result, ToolResult) and "NOT verified" in result.verification
    assert h(b"x = 2\n") in result.verification and h(b"x=2\n") in result.verification
    shown = CliRunner().invoke(cli, ["show", str(t.path)])
    assert shown.exit_code == 0 and "mismatch    toolu_m  a.py: expected" in shown.stdout


def test_what_only_the_journal_saw_becomes_events(tmp_path: Path, home: Path) -> None:
    """Killed after the hook's commit but before the transcript's result line; an intent whose
    call the transcript never wrote; a checkpoint (PreCompact)."""
    ws = tmp_path / "ws"
    head = make_repo(ws, {"a.py": b"a\n"})
    t = Transcript(tmp_path / "t.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    t.prompt("go")
    hj.checkpoint(head)
    t.tool_use("toolu_w", "Write", {"file_path": str(ws / "b.py"), "content": "b\n"})
    lsn = hj.file_intent("toolu_w", "Write", {"content": "b\n"}, "b.py", b"b\n")
    (ws / "b.py").write_bytes(b"b\n")
    hj.commit(lsn, "toolu_w", h(b"b\n"), "b.py")
    hj.file_intent("toolu_lost", "Write", {"content": "c\n"}, "c.py", b"c\n")
    hj.close()
    s = load(t.path)
    w = _call(s, "toolu_w")
    assert s.event(w).status == "ok", "the journal's commit completes the call the transcript left open"
    done = s.completion_of(w)
    assert done is not None and s.event(done).source == str(hj.path)
    lost = [i for i in s.pending() if s.event(i).source == str(hj.path)]
    assert [s.event(i).target for i in lost] == ["c.py"], "the journal's own intent is a pending call"
    cps = s.indices_where(kind="checkpoint")
    assert len(cps) == 1 and isinstance(s.detail(cps[0]), Checkpoint) and s.detail(cps[0]).git == head
    assert cps[0] < w, "interleaved by time"


def test_a_session_without_a_hook_journal_is_as_it_was(tmp_path: Path, home: Path) -> None:
    s = load(HELLO)
    assert s.hooked is None and journal_for(s) is None and len(s.sources) == 1
    data = json.loads(CliRunner().invoke(cli, ["show", "--json", str(HELLO)]).stdout)
    assert data["journal"] is None and data["hooked"] is None


def test_show_json_names_the_journal_and_check_finds_it_intact(tmp_path: Path, home: Path) -> None:
    transcript, hj = _hello(tmp_path, home)
    r = CliRunner().invoke(cli, ["show", "--json", str(transcript)])
    data = json.loads(r.stdout)
    assert data["journal"] == str(hj.path) and data["hooked"]["linked_calls"] == 2
    assert data["format"] == "claude-code" and data["pending"] == []
    ok = CliRunner().invoke(cli, ["check", "--json", str(transcript)])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["ok"] is True
    assert str(hj.path) in CliRunner().invoke(cli, ["check", str(transcript)]).stdout
    lines = hj.path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"Write"', b'"Wrote"')  # a flipped record, the chain still after it
    hj.path.write_bytes(b"\n".join(lines))
    bad = CliRunner().invoke(cli, ["check", "--json", str(transcript)])
    assert bad.exit_code == 1 and json.loads(bad.stdout)["ok"] is False


def test_codex_is_merged_by_the_same_mechanism(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"a": b"a\n"})
    hj = HookJournal.create(home, CODEX_SESSION, ws, agent="codex", transcript=CODEX)
    lsn = hj.shell_intent(CODEX_CALL, "ls", tool="exec_command")
    hj.commit(lsn, CODEX_CALL, result={"exit_code": 0, "output_tail": ""})
    hj.close()
    s = load(CODEX)
    assert s.hooked is not None and s.hooked.journal == hj.path and s.hooked.linked == 1
    res = s.detail(s.completion_of(_call(s, CODEX_CALL)) or -1)
    assert isinstance(res, ToolResult) and res.verification.startswith("hook journal:")
    assert git(ws, "status", "--porcelain") == "", "the snapshot left the user's index and tree alone"


def test_gemini_calls_are_joined_by_their_input_when_the_hook_had_no_id(tmp_path: Path, home: Path) -> None:
    """Gemini CLI's hooks get no call id: the hook's synthesized ``<order>:<input digest>`` finds the
    transcript's call with that input (a real Gemini CLI session from the corpus)."""
    s0 = load(GEMINI)
    write = next(i for i in s0.indices_where(kind="tool_call") if s0.detail(i).name == "write_file")
    args = s0.detail(write).arguments
    assert isinstance(args, dict)
    ws = tmp_path / "ws"
    make_repo(ws, {"README.md": b"r\n"})
    content = str(args["content"]).encode()
    hj = HookJournal.create(home, GEMINI_SESSION, ws, agent="gemini-cli", transcript=GEMINI)
    synthesized = f"7:{input_digest(args)}"
    lsn = hj.file_intent(synthesized, "write_file", args, "GEMINI.md", content)
    (ws / "GEMINI.md").write_bytes(content)
    hj.commit(lsn, synthesized, h(content), "GEMINI.md")
    hj.close()
    s = load(GEMINI)
    assert s.hooked is not None and s.hooked.linked == 1 and len(s) == len(s0), "joined, not added"
    call = s.detail(write)
    assert isinstance(call, ToolCall) and call.edit is not None and call.edit.post == h(content)
    result = s.detail(s.completion_of(write) or -1)
    assert isinstance(result, ToolResult) and result.verification == "hook journal: post hash verified"


def test_exports_of_a_hooked_session(tmp_path: Path, home: Path) -> None:
    """CSV carries the merged session (hashes the transcript does not have); a signed bundle carries
    the transcript and its hook journal, and verify merges them again from what it carries, on a
    machine without the hook journal; the replay made from it shows the journal's hashes."""
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": b"x=1\n"})
    t = Transcript(tmp_path / "t.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    t.prompt("edit")
    args = {"file_path": str(ws / "a.py"), "old_string": "x=1", "new_string": "x=2"}
    t.tool_use("toolu_x", "Edit", args)
    lsn = hj.file_intent("toolu_x", "Edit", args, "a.py", b"x=2\n")
    (ws / "a.py").write_bytes(b"x=2\n")
    hj.commit(lsn, "toolu_x", h(b"x=2\n"), "a.py")
    t.tool_result("toolu_x", "The file a.py has been updated.")  # no originalFile: no hash of its own
    hj.close()
    runner = CliRunner()
    csv = tmp_path / "s.csv"
    assert runner.invoke(cli, ["export", "csv", str(t.path), "-o", str(csv)]).exit_code == 0
    assert h(b"x=1\n") in csv.read_text() and h(b"x=2\n") in csv.read_text(), "the journal's hashes"
    key = tmp_path / "key"
    assert runner.invoke(cli, ["keygen", "-o", str(key)]).exit_code == 0
    out = tmp_path / "b.json"
    r = runner.invoke(cli, ["export", "bundle", str(t.path), "-o", str(out), "--key", str(key)])
    assert r.exit_code == 0, r.output
    v = runner.invoke(cli, ["verify", str(out), "--key", str(key) + ".pub", "--json"])
    assert v.exit_code == 0, v.output
    predicate = json.loads(base64.b64decode(json.loads(out.read_bytes())["payload"]))["predicate"]
    names = [x["name"] for x in predicate["sources"]]
    assert names == ["t.jsonl", f"wbhome/hooks/claude-code/{t.session}/journal.jsonl"]
    assert predicate["hooks"] == "wbhome/hooks"
    shutil.rmtree(home)  # the reviewer's machine: no hook journal but the one the bundle carries
    again = runner.invoke(cli, ["verify", str(out), "--key", str(key) + ".pub"])
    assert again.exit_code == 0, again.output
    shown = runner.invoke(cli, ["show", str(out), "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["hooked"]["linked_calls"] == 1, shown.output
    assert runner.invoke(cli, ["export", "markdown", str(out), "-o", str(tmp_path / "s.md")]).exit_code == 0
    assert h(b"x=2\n")[:12] in (tmp_path / "s.md").read_text(), "the post hash the hook observed"
