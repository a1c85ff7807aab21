"""``walkback show``, ``check`` (and ``--repair``) and ``import``: JSON contracts, exit codes, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from walkback.journal import read_records, scan
from walkback.journal.testing import write_run

from walkback.cli import cli

SHOW_KEYS = {
    *("format", "task", "runs", "events", "kinds", "agents", "status", "recovered", "integrity", "pending"),
    *("last_committed_lsn", "files", "approvals", "journal", "hooked", "verification"),
}
CHECK_KEYS = {"ok", "dialect", "records", "last_lsn", "chain", "torn_tail", "corrupt", "torn_lines"}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    write_run(tmp_path / "run", steps=3, end=None, pending=True)
    return tmp_path / "run"


def test_show_json_has_the_documented_keys(runner: CliRunner, crashed: Path) -> None:
    r = run(runner, "show", crashed, "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {
        "format",
        "events",
        "kinds",
        "agents",
        "status",
        "integrity",
        "pending",
        "last_committed_lsn",
    } <= set(data)
    assert set(data) == SHOW_KEYS, "the --json contract changes only on purpose"
    assert data["format"] == "walkback" and data["status"] == "crashed"
    assert data["events"] == sum(data["kinds"].values()) == len(read_records(crashed)[0])
    assert data["kinds"]["tool_call"] == 4 and data["kinds"]["tool_result"] == 3
    assert [a["id"] for a in data["agents"]] == ["main"]
    assert data["integrity"] == {"chain": "ok", "torn_tail": False, "first_bad_lsn": None, "skipped": 0}
    late = len(read_records(crashed)[0]) - 1
    assert data["pending"] == [{"lsn": late, "tool": "write_file", "target": "src/late.py", "agent": "main"}]
    assert data["last_committed_lsn"] == late - 1


def test_show_json_for_the_seq_dialect_uses_the_seq_as_lsn(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "seq.jsonl"
    path.write_bytes(
        b'{"seq":4,"task_id":"T","tool":"write_file","args":{"path":"a"},"idempotency_key":"T:4"}\n'
        b'{"seq":5,"task_id":"T","tool":"write_file","args":{"path":"b"},"idempotency_key":"T:5"}\n'
        b'{"seq":4,"result":{},"status":"ok"}\n'
    )
    data = json.loads(run(runner, "show", path, "--json").stdout)
    assert data["pending"] == [{"lsn": 5, "tool": "write_file", "target": "b", "agent": "main"}]
    assert data["last_committed_lsn"] == 4 and data["integrity"]["chain"] == "absent"


def test_show_text_names_status_integrity_and_pending(runner: CliRunner, crashed: Path) -> None:
    r = run(runner, "show", crashed)
    assert r.exit_code == 0
    assert "status      crashed" in r.stdout and "integrity   chain ok" in r.stdout
    assert "1 intent(s) without a commit" in r.stdout and "src/late.py" in r.stdout


def test_check_json_of_an_intact_journal(runner: CliRunner, crashed: Path) -> None:
    r = run(runner, "check", crashed, "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert {"ok", "records", "last_lsn", "chain", "torn_tail", "corrupt"} <= set(data)
    assert set(data) == CHECK_KEYS, "the --json contract changes only on purpose"
    n = len(read_records(crashed)[0])
    assert data | {"dialect": None, "torn_lines": None} == {
        "ok": True,
        "records": n,
        "last_lsn": n - 1,
        "chain": "ok",
        "torn_tail": None,
        "corrupt": [],
        "dialect": None,
        "torn_lines": None,
    }


def test_check_exits_1_on_a_torn_tail_and_repair_fixes_it(runner: CliRunner, crashed: Path) -> None:
    path = crashed / "journal.jsonl"
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b'{"v":1,"lsn":17,"ts":"20')
    r = run(runner, "check", crashed, "--json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert (
        data["ok"] is False and data["torn_tail"] == {"offset": size, "bytes": 24} and data["corrupt"] == []
    )
    text = run(runner, "check", crashed)
    assert text.exit_code == 1 and text.stdout == ""
    assert text.stderr.count("\n") == 1 and "repairable with `walkback check --repair" in text.stderr
    assert text.stderr.startswith(f"{path}:{data['records'] + 1}: torn tail of 24 bytes")
    fixed = run(runner, "check", "--repair", crashed, "--json")
    assert fixed.exit_code == 0
    rep = json.loads(fixed.stdout)
    assert set(rep) == {"repaired", "truncated_bytes", "last_good_lsn", "broken_copy", "recovered_lsn"}
    assert (
        rep["repaired"] is True and rep["truncated_bytes"] == 24 and rep["last_good_lsn"] == data["last_lsn"]
    )
    assert rep["recovered_lsn"] == data["last_lsn"] + 1 and Path(rep["broken_copy"]).exists()
    assert run(runner, "check", crashed).exit_code == 0
    again = run(runner, "check", "--repair", crashed)
    assert again.exit_code == 0 and "intact, nothing to repair" in again.stdout


def test_check_exits_1_on_corruption_and_repair_refuses_it(runner: CliRunner, crashed: Path) -> None:
    path = crashed / "journal.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b"garbage in the middle\n"
    path.write_bytes(b"".join(lines))
    r = run(runner, "check", path, "--json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["chain"] == "broken" and data["corrupt"][0]["line"] == 4 and data["corrupt"][0]["lsn"] == 3
    assert data["corrupt"][0]["reason"].startswith("not JSON")
    text = run(runner, "check", path)
    assert text.stderr.splitlines()[0].startswith(f"{path}:4: corrupt (lsn 3): not JSON")
    before = path.read_bytes()
    refused = run(runner, "check", "--repair", path)
    assert refused.exit_code == 1 and "not repaired: a human must decide" in refused.stderr
    assert refused.stderr.startswith(f"Error: {path}:4: ") and path.read_bytes() == before
    shown = run(runner, "show", path, "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["integrity"]["chain"] == "broken"


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        (b'{"lsn":1,"type":"plan"}\n{"lsn":1,"type":"plan"}\n{"lsn":2,"type":"plan"}\n', "duplicate lsn 1"),
        (b'{"lsn":1,"type":"plan"}\n{"lsn":3,"type":"plan"}\n{"lsn":4,"type":"plan"}\n', "(lsn 2 missing)"),
    ],
)
def test_check_exits_1_on_duplicate_or_missing_lsn(
    runner: CliRunner, tmp_path: Path, lines: bytes, reason: str
) -> None:
    path = tmp_path / "seed.jsonl"
    path.write_bytes(lines)
    r = run(runner, "check", path, "--json")
    assert r.exit_code == 1 and reason in json.loads(r.stdout)["corrupt"][0]["reason"]


def test_check_repair_refuses_while_a_live_writer_holds_the_run_lock(
    runner: CliRunner, crashed: Path
) -> None:
    with open(crashed / "journal.jsonl", "ab") as f:
        f.write(b"{torn")
    hold = (
        "import sys, time; from journal.runlock import RunLock; RunLock(sys.argv[1]).acquire(); "
        "print(1, flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", hold, str(crashed)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline()
        r = run(runner, "check", "--repair", crashed)
        assert r.exit_code == 1 and "another process is writing this run" in r.stderr
        assert scan(crashed).torn, "nothing was cut under a live writer"
    finally:
        proc.kill()
        proc.wait()
    assert run(runner, "check", "--repair", crashed).exit_code == 0


def test_import_writes_a_v1_journal(runner: CliRunner, tmp_path: Path) -> None:
    src = tmp_path / "lsn.jsonl"
    src.write_bytes(b'{"lsn":1,"type":"plan"}\n{"lsn":2,"type":"intent","tool":"t","file":"a.py"}\n')
    r = run(runner, "import", src, "-o", tmp_path / "out")
    assert r.exit_code == 0 and "2 events from walkback-seed-lsn" in r.stdout
    records, res = read_records(tmp_path / "out")
    assert res.intact and records[0].data["source"]["format"] == "walkback-seed-lsn"
    exists = run(runner, "import", src, "-o", tmp_path / "out")
    assert exists.exit_code == 1 and "journal already exists" in exists.stderr


# -- bad input of every kind: one clear line naming file, line and problem; documented exit code --

DEEP = b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n"
BAD_INPUTS = {
    "empty": (b"", 1, "empty"),
    "binary": (bytes(range(256)) * 64, 1, "binary data"),
    "json_array": (b'[{"lsn":0,"type":"plan"},{"lsn":1,"type":"plan"}]\n', 1, "a JSON array"),
    "invalid_utf8": (
        b'{"lsn":0,"type":"plan","note":"caf\xe9"}\n',
        1,
        "not UTF-8 text (byte 0xe9 at byte 34)",
    ),
    "deep_nesting": (DEEP, 1, "depth limit exceeded"),
    "six_mb_line": (b"x" * (6 << 20) + b"\n", 1, "not JSON"),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["show", "check", "import"])
def test_unusable_input_gets_one_clear_error_line_and_exit_2(
    runner: CliRunner, tmp_path: Path, kind: str, command: str
) -> None:
    data, line, problem = BAD_INPUTS[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(data)
    extra = ["-o", str(tmp_path / "out")] if command == "import" else ["--json"]
    r = runner.invoke(cli, [command, str(path), *extra])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), "no traceback"
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and len(r.stderr) < 300 + len(str(path))
    assert r.stderr.startswith(f"Error: {path}:{line}: ") and problem in r.stderr
    assert not (tmp_path / "out").exists()


def test_garbage_mid_file_is_one_message_naming_its_line_and_exit_1(runner: CliRunner, crashed: Path) -> None:
    path = crashed / "journal.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(6, b"\x89PNG\r\n")
    lines.insert(9, b"y" * (6 << 20) + b"\n")
    path.write_bytes(b"".join(lines))
    r = run(runner, "check", path)
    assert r.exit_code == 1 and r.stdout == ""
    msgs = r.stderr.splitlines()
    assert [m.split(": ")[0] for m in msgs] == [f"{path}:7", f"{path}:10"]
    assert (
        "not UTF-8 text (byte 0x89 at byte 0)" in msgs[0]
        and "not JSON" in msgs[1]
        and all(len(m) < 300 + len(str(path)) for m in msgs)
    )
    shown = run(runner, "show", path)
    assert shown.exit_code == 0 and "chain broken at lsn 6 (line 7: " in shown.stdout


def test_untrusted_text_cannot_drive_the_terminal(runner: CliRunner, tmp_path: Path) -> None:
    from walkback.journal import JournalWriter

    with JournalWriter.create(tmp_path / "run", task="evil\x1b[2J\nfake: line\u202e") as w:
        w.append("intent", tool="rm\x1b[31m", target="a\nb", effect="fs", pre="absent", post="absent")
    r = run(runner, "show", tmp_path / "run")
    assert "\x1b" not in r.stdout and "\u202e" not in r.stdout
    assert "a\\x0ab" in r.stdout
    # the task by its first line (issue 27): escaped, and its second line fakes no output line
    assert "  task        evil\\x1b[2J\n" in r.stdout
    assert not any(line.startswith("fake:") for line in r.stdout.splitlines())
    with JournalWriter.create(tmp_path / "one", task="evil\x1b[2J fake\u202e") as w:
        pass
    r = run(runner, "show", tmp_path / "one")
    assert "  task        evil\\x1b[2J fake\\u202e\n" in r.stdout


def test_the_installed_entry_point_reports_errors_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"[1,2,3]\n")
    for args in (["check", str(path)], ["show", str(path)], ["check", str(tmp_path / "missing.jsonl")]):
        p = subprocess.run([sys.executable, "-m", "walkback", *args], capture_output=True, text=True)
        assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.startswith("Error: "), p.stderr
        assert p.stderr.count("\n") == 1
