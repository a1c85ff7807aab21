"""Targets a hostile or changed workspace holds: a directory where a file was, a link planted at a
temp name. Every other intent is still classified; nothing is written outside the workspace."""

from __future__ import annotations

import orjson
from click.testing import CliRunner
from recovery_helpers import Run
from walkback.journal.recovery import analyze, recover

from walkback.cli import cli

NEW = b"def fetchUser(i):\n    return i\n\nx = fetchUser(1)\n"


def test_a_target_that_is_now_a_directory_is_in_doubt_and_the_others_are_still_classified(run: Run) -> None:
    a = run.file_intent("write_file", "src/keep.py", b"KEEP = 2\n", content="KEEP = 2\n")
    b = run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser")
    run.w.close()
    (run.ws / "src/keep.py").unlink()
    (run.ws / "src/keep.py").mkdir()
    plan = analyze(run.dir)
    assert [(f.lsn, f.finding, f.action) for f in plan.findings] == [
        (a, "in_doubt", "ask_human"),
        (b, "not_applied", "redo"),
    ]
    assert "is now a directory" in plan.findings[0].detail
    res = CliRunner().invoke(cli, ["recover", str(run.dir), "--json"])
    assert res.exit_code == 3 and len(orjson.loads(res.output)["findings"]) == 2
    recover(run.dir, apply=True)
    assert (run.ws / "src/keep.py").is_dir() and (run.ws / "src/users.py").read_bytes() == NEW


def test_recover_apply_never_writes_through_a_link_at_the_temp_name(run: Run) -> None:
    victim = run.ws.parent / "victim"
    victim.write_bytes(b"precious\n")
    run.file_intent("replace_symbol", "src/users.py", NEW, old="getUserById", new="fetchUser")
    run.w.close()
    (run.ws / "src/users.py.wb-tmp").symlink_to(victim)
    plan = recover(run.dir, apply=True)
    assert plan.findings[0].done
    assert victim.read_bytes() == b"precious\n"
    assert (run.ws / "src/users.py").read_bytes() == NEW and not (run.ws / "src/users.py").is_symlink()
