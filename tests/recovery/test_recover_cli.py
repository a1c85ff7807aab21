"""``walkback recover``: the --json shape, the human output, run ids, and bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from recovery_helpers import Run

from walkback.cli import cli

NEW = b"def fetchUser(i):\n    return i\n\nx = fetchUser(1)\n"


def crashed(run: Run) -> int:
    lsn = run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser", step=4)
    run.w.close()
    return lsn


def test_json_has_exactly_the_documented_shape(run: Run) -> None:
    lsn = crashed(run)
    res = CliRunner().invoke(cli, ["recover", str(run.dir), "--workspace", str(run.ws), "--json"])
    assert res.exit_code == 0, res.output
    doc = orjson.loads(res.output)
    assert set(doc) == {"findings", "committed_through", "next_lsn", "brief"}
    [f] = doc["findings"]
    assert set(f) == {"lsn", "target", "tool", "finding", "action", "detail"}
    assert (f["lsn"], f["target"], f["tool"], f["finding"], f["action"]) == (
        lsn,
        "src/users.py",
        "replace_symbol",
        "not_applied",
        "redo",
    )
    assert (doc["committed_through"], doc["next_lsn"]) == (lsn - 1, lsn + 1)
    assert doc["brief"].startswith("Task: Rename getUserById to fetchUser (run r1).")


def test_apply_json_reports_the_journal_after_recovery(run: Run) -> None:
    lsn = crashed(run)
    res = CliRunner().invoke(cli, ["recover", str(run.dir / "journal.jsonl"), "--apply", "--json"])
    doc = orjson.loads(res.output)
    # decision, commit, then the journaled resume brief: the agent continues after the three
    assert doc["committed_through"] == lsn - 1 and doc["next_lsn"] == lsn + 4
    assert "committed (lsn" in doc["brief"]
    assert (run.ws / "src/users.py").read_bytes() == NEW


def test_human_output_is_a_table_then_the_brief(run: Run) -> None:
    crashed(run)
    res = CliRunner().invoke(cli, ["recover", str(run.dir)])
    lines = res.output.splitlines()
    assert lines[0].split() == ["AGENT", "LSN", "TOOL", "TARGET", "FINDING", "ACTION"]
    assert lines[1].split() == ["main", "1", "replace_symbol", "src/users.py", "not_applied", "redo"]
    assert "Next: redo lsn 1, then continue at lsn 2." in res.output


def test_a_run_id_is_found_under_walkback_home(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed(run)
    monkeypatch.setenv("WALKBACK_HOME", str(tmp_path))  # the fixture's run dir is tmp_path/runs/r1
    res = CliRunner().invoke(cli, ["recover", "r1", "--json"])
    assert res.exit_code == 0, res.output
    assert orjson.loads(res.output)["findings"][0]["finding"] == "not_applied"


def walkback(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK")}
    env["WALKBACK_HOME"] = str(cwd / "home")
    return subprocess.run(
        [sys.executable, "-m", "walkback", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def bad_inputs(run: Run, tmp: Path) -> dict[str, tuple[list[str], str]]:
    crashed(run)
    (tmp / "empty.jsonl").write_bytes(b"")
    (tmp / "array.json").write_bytes(b'[{"lsn": 0}]\n')
    broken = tmp / "broken"
    broken.mkdir()
    lines = (run.dir / "journal.jsonl").read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b"Rename", b"Renamx")
    (broken / "journal.jsonl").write_bytes(b"".join(lines))
    return {
        "missing": (["recover", "nope-no-such-run"], "no run"),
        "empty": (["recover", "empty.jsonl"], "empty"),
        "array": (["recover", "array.json"], "JSON array"),
        "corrupt": (["recover", "broken", "--workspace", str(run.ws)], "corruption"),
        "no workspace dir": (["recover", str(run.dir), "--workspace", str(tmp / "gone")], "not a directory"),
    }


@pytest.mark.parametrize("case", ["missing", "empty", "array", "corrupt", "no workspace dir"])
def test_bad_input_is_one_error_line_without_traceback(run: Run, tmp_path: Path, case: str) -> None:
    args, words = bad_inputs(run, tmp_path)[case]
    p = walkback(*args, cwd=tmp_path)
    assert p.returncode != 0
    assert p.stdout == ""
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error: "), p.stderr
    assert words in err[0] and "Traceback" not in p.stderr


def test_exit_0_when_recovery_leaves_nothing_for_a_human(run: Run) -> None:
    crashed(run)
    dry = CliRunner().invoke(cli, ["recover", str(run.dir), "--json"])
    assert dry.exit_code == 0, dry.output  # a redo: --apply does it, nobody has to decide
    applied = CliRunner().invoke(cli, ["recover", str(run.dir), "--apply"])
    assert applied.exit_code == 0, applied.output
    assert CliRunner().invoke(cli, ["recover", str(run.dir)]).exit_code == 0


def test_exit_3_when_a_finding_needs_a_human_with_or_without_json(run: Run) -> None:
    run.command(["make", "deploy"])  # in doubt: not idempotent
    run.w.close()
    for args in ([], ["--json"], ["--apply"], ["--apply", "--json"]):
        res = CliRunner().invoke(cli, ["recover", str(run.dir), *args])
        assert res.exit_code == 3, (args, res.output)
        if "--json" in args:
            [f] = orjson.loads(res.output)["findings"]
            assert (f["finding"], f["action"]) == ("in_doubt", "ask_human")
