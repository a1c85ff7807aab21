"""Exact recovery of a hooked session: ``walkback recover TRANSCRIPT --workspace WS [--apply]``.

A crashed Claude Code session (transcript written record by record, killed between a hook's intent
and its commit) in a real git workspace; the hook journal in the contract's shape, written with the
real writer and fsync. Recovery is walkback's own (journal.recovery) on the hook journal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hookjournal_helpers import HookJournal, Transcript, git, h, make_repo
from walkback.importers import load
from walkback.journal import read_records
from walkback.journal.manifest import manifest

from walkback.cli import cli

HEAD_C = b"c as committed\n"
PRE_C, POST_C = b"c edited since, never committed\n", b"c edited again\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "wbhome"
    monkeypatch.setenv("WALKBACK_HOME", str(home))
    return home


def walkback(*args: str | Path) -> Result:
    """``walkback ARGS`` in this process (the one with a failpoint runs as a process of its own)."""
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def walkback_process(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "walkback", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip


def _edit(t: Transcript, hj: HookJournal, call: str, target: str, old: bytes, new: bytes) -> int:
    """The agent asks for an Edit (transcript) and the PreToolUse hook journals it (fsynced)."""
    args = {"file_path": str(hj.ws / target), "old_string": old.decode(), "new_string": new.decode()}
    t.tool_use(call, "Edit", args)
    return hj.file_intent(call, "Edit", args, target, new)


def _crashed(tmp_path: Path, home: Path) -> tuple[Transcript, HookJournal]:
    """Three file calls left open by a SIGKILL: a.py applied, b.py not applied, c.py torn (junk in
    it, and git HEAD holds yet another version than the intent's pre image)."""
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": b"a = 1\n", "c.py": HEAD_C})
    (ws / "c.py").write_bytes(PRE_C)
    t = Transcript(tmp_path / "session.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    t.prompt("edit three files")
    _edit(t, hj, "toolu_a", "a.py", b"a = 1\n", b"a = 2\n")
    (ws / "a.py").write_bytes(b"a = 2\n")  # applied; killed before PostToolUse
    t.tool_use("toolu_b", "Write", {"file_path": str(ws / "b.py"), "content": "b = 1\n"})
    hj.file_intent("toolu_b", "Write", {"content": "b = 1\n"}, "b.py", b"b = 1\n")  # never applied
    _edit(t, hj, "toolu_c", "c.py", PRE_C, POST_C)
    (ws / "c.py").write_bytes(b"\x00junk")  # torn
    hj.close()
    return t, hj


def test_findings_name_call_ids_and_nothing_changes_without_apply(tmp_path: Path, home: Path) -> None:
    t, hj = _crashed(tmp_path, home)
    before = hj.path.read_bytes()
    r = walkback("recover", t.path, "--workspace", hj.ws, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["journal"] == str(hj.path) and out["session"] == str(t.path) and out["format"] == "claude-code"
    found = {f["call"]: (f["target"], f["finding"], f["action"]) for f in out["findings"]}
    assert found == {
        "toolu_a": ("a.py", "applied", "commit"),
        "toolu_b": ("b.py", "not_applied", "redo"),
        "toolu_c": ("c.py", "torn", "restore_redo"),
    }
    assert "(call toolu_c)" in out["brief"]
    assert hj.path.read_bytes() == before and (hj.ws / "c.py").read_bytes() == b"\x00junk"
    table = walkback("recover", t.path, "--workspace", hj.ws)
    assert "LSN  CALL" in table.stdout and "toolu_b" in table.stdout


def test_apply_commits_redoes_and_restores_a_torn_file_from_its_pre_image(tmp_path: Path, home: Path) -> None:
    t, hj = _crashed(tmp_path, home)
    r = walkback("recover", t.path, "--workspace", hj.ws, "--apply", "--json")
    assert r.exit_code == 0, r.output
    ws = hj.ws
    assert (ws / "a.py").read_bytes() == b"a = 2\n" and (ws / "b.py").read_bytes() == b"b = 1\n"
    assert (ws / "c.py").read_bytes() == POST_C and h((ws / "c.py").read_bytes()) == h(POST_C)
    assert git(ws, "show", "HEAD:c.py") == HEAD_C.decode().strip(), "git had another version all along"
    recs = [r.data for r in read_records(hj.path)[0]]
    by_type = [(d["type"], d.get("ref")) for d in recs]
    for intent in (d["lsn"] for d in recs if d["type"] == "intent"):
        decision, commit = by_type.index(("recovery", intent)), by_type.index(("commit", intent))
        assert decision < commit, "each decision is journaled before it is acted on"
    torn = next(d for d in recs if d["type"] == "recovery" and d["target"] == "c.py")
    assert (torn["finding"], torn["action"]) == ("torn", "restore_redo")
    assert recs[-1]["type"] == "recovery.brief" and "restored from the intent" in recs[-1]["brief"]
    again = walkback("recover", t.path, "--workspace", ws, "--apply", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["findings"] == []
    assert len(read_records(hj.path)[0]) == len(recs), "a second run changes nothing"
    s = load(t.path)
    assert s.pending() == [], "the transcript's calls are closed by the recovery's commits"


def test_a_decision_is_durable_before_its_effect(tmp_path: Path, home: Path) -> None:
    """SIGKILLed right after journaling the torn file's decision: the decision is there, the file
    untouched; a second recovery finishes the job."""
    t, hj = _crashed(tmp_path, home)
    env = {**os.environ, "WALKBACK_FAILPOINT": "recovery.after_decision:3"}
    killed = walkback_process("recover", t.path, "--workspace", hj.ws, "--apply", env=env)
    assert killed.returncode == -9
    recs = [r.data for r in read_records(hj.path)[0]]
    assert [d["target"] for d in recs if d["type"] == "recovery"][-1] == "c.py"
    assert (hj.ws / "c.py").read_bytes() == b"\x00junk"
    done = walkback("recover", t.path, "--workspace", hj.ws, "--apply")
    assert done.exit_code == 0, done.output
    assert (hj.ws / "c.py").read_bytes() == POST_C


def test_a_torn_new_file_is_exact_without_git(tmp_path: Path, home: Path) -> None:
    """A file the session created and never committed, then torn: the pre image is the journal's."""
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "n.txt").write_bytes(b"made by the agent\n")
    t = Transcript(tmp_path / "s.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    _edit(t, hj, "toolu_n", "n.txt", b"made by the agent\n", b"made, then edited\n")
    (ws / "n.txt").write_bytes(b"made, th")
    hj.close()
    r = walkback("recover", t.path, "--workspace", ws, "--apply", "--json")
    assert r.exit_code == 0, r.output
    assert [(f["call"], f["finding"]) for f in json.loads(r.stdout)["findings"]] == [("toolu_n", "torn")]
    assert (ws / "n.txt").read_bytes() == b"made, then edited\n"


def test_a_shell_call_in_doubt_lists_what_changed_since_its_snapshot(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": b"a\n", "keep.txt": b"k\n", ".gitignore": b"*.log\n"})
    (ws / "staged.txt").write_bytes(b"s\n")
    git(ws, "add", "staged.txt")  # the user's own staged change
    index = (ws / ".git" / "index").read_bytes()
    t = Transcript(tmp_path / "s.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    t.tool_use("toolu_sh", "Bash", {"command": "./build.sh"})
    hj.shell_intent("toolu_sh", "./build.sh")
    (ws / "a.py").write_bytes(b"a changed\n")
    (ws / "new.txt").write_bytes(b"n\n")
    (ws / "keep.txt").unlink()
    (ws / "build.log").write_bytes(b"ignored\n")
    hj.close()
    r = walkback("recover", t.path, "--workspace", ws, "--apply", "--json")
    assert r.exit_code == 3, "a command in doubt needs a human"
    (f,) = json.loads(r.stdout)["findings"]
    assert (f["call"], f["finding"], f["action"]) == ("toolu_sh", "in_doubt", "ask_human")
    assert f["detail"].endswith("changed since its snapshot: a.py, keep.txt, new.txt")
    journaled = [r.data for r in read_records(hj.path)[0] if r.data["type"] == "recovery"]
    assert journaled[-1]["detail"] == f["detail"], "the decision journaled says the same"
    assert (ws / ".git" / "index").read_bytes() == index, "the user's index is untouched"
    assert git(ws, "stash", "list") == "" and git(ws, "branch", "--show-current") == "main"


def test_a_manifest_snapshot_outside_git(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "x.txt").write_bytes(b"x\n")
    (ws / "y.txt").write_bytes(b"y\n")
    t = Transcript(tmp_path / "s.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    listing = manifest(ws)  # what the hook command stores before the command
    hj.w.blobs.put(listing)  # the listing goes to the blob store before the intent names it
    t.tool_use("toolu_sh", "Bash", {"command": "make"})
    hj.w.append("intent", tool="Bash", call="toolu_sh", args={"command": "make"}, target="make",
                effect="command", cwd=str(ws), snapshot={"manifest": h(listing)})  # fmt: skip
    (ws / "y.txt").write_bytes(b"y2\n")
    hj.close()
    r = walkback("recover", t.path, "--workspace", ws, "--json")
    assert r.exit_code == 3
    assert json.loads(r.stdout)["findings"][0]["detail"].endswith("changed since its snapshot: y.txt")


def test_what_the_transcript_closed_is_settled_from_it(tmp_path: Path, home: Path) -> None:
    """The hook journaled an Edit the user then refused (no post hook ever came), and a command whose
    post hook was lost though the transcript has its result: neither is redone nor in doubt."""
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": b"a = 1\n"})
    t = Transcript(tmp_path / "s.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    _edit(t, hj, "toolu_no", "a.py", b"a = 1\n", b"a = 2\n")  # the file stays as it was: 'pre'
    t.tool_result("toolu_no", "The user doesn't want to proceed with this tool use.", error=True)
    t.tool_use("toolu_ran", "Bash", {"command": "true"})
    hj.shell_intent("toolu_ran", "true")
    t.tool_result("toolu_ran", "done")
    hj.close()
    looked = walkback("recover", t.path, "--workspace", ws, "--json")
    found = {f["call"]: (f["finding"], f["action"]) for f in json.loads(looked.stdout)["findings"]}
    assert found == {"toolu_no": ("not_applied", "none"), "toolu_ran": ("applied", "commit")}
    assert looked.exit_code == 0, "nothing is left for a human"
    r = walkback("recover", t.path, "--workspace", ws, "--apply", "--json")
    assert r.exit_code == 0, r.output
    assert (ws / "a.py").read_bytes() == b"a = 1\n", "a refused edit is never redone"
    recs = [r.data for r in read_records(hj.path)[0]]
    assert [(d["type"], d.get("call")) for d in recs[-4:]] == [
        ("recovery", None), ("fail", "toolu_no"), ("recovery", None), ("commit", "toolu_ran"),
    ]  # fmt: skip
    again = walkback("recover", t.path, "--workspace", ws, "--apply", "--json")
    assert json.loads(again.stdout)["findings"] == [] and len(read_records(hj.path)[0]) == len(recs)
