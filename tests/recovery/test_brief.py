"""The resume brief says facts: task, committed through, each finding and what was done, what next."""

from __future__ import annotations

from recovery_helpers import Run
from walkback.journal import read_records
from walkback.journal.recovery import analyze, recover


def test_brief_of_a_torn_intent_before_and_after_apply(run: Run) -> None:
    for i in range(3):
        lsn = run.file_intent("write_file", f"f{i}.txt", b"x\n", content="x\n", step=i)
        (run.ws / f"f{i}.txt").write_bytes(b"x\n")
        run.commit(lsn)
    torn = run.file_intent("write_file", "src/keep.py", b"KEEP = 2\n", content="KEEP = 2\n", step=3)
    (run.ws / "src/keep.py").write_bytes(b"KE")
    run.w.close()
    before = analyze(run.dir).brief.splitlines()
    assert before[0] == "Task: Rename getUserById to fetchUser (run r1)."
    assert before[1] == f"Committed through lsn {torn - 1}."
    assert before[2].startswith(f"lsn {torn} (step 3) write_file src/keep.py was torn")
    assert "restore pre from the blob store" in before[2]
    assert (
        before[3]
        == f"Next: restore the pre image of lsn {torn} and redo it, then continue at lsn {torn + 1}."
    )
    after = recover(run.dir, apply=True).brief.splitlines()
    assert after[1] == f"Committed through lsn {torn - 1}."
    assert after[2] == (
        f"lsn {torn} (step 3) write_file src/keep.py was torn (its target is neither the pre nor the post "
        "image): restored from the blob store, redone from the blob store; post hash verified; "
        f"committed (lsn {torn + 2})."
    )
    # lsn torn+3 is the brief itself (recovery.brief, journaled so viewers show the brief used)
    assert after[3] == f"Next: continue at lsn {torn + 4}."
    recorded = [r for r in read_records(run.journal)[0] if r.data["type"] == "recovery.brief"]
    assert [(r.lsn, r.data["brief"].splitlines()) for r in recorded] == [(torn + 3, after)]


def test_brief_names_what_is_left_for_a_human(run: Run) -> None:
    c = run.command(["make"], step=2)
    run.w.close()
    brief = recover(run.dir, apply=True).brief
    assert f"lsn {c} (step 2) run_command make is in doubt: left for a human." in brief
    # c+1 is the decision, c+2 the journaled brief itself
    assert brief.endswith(f"Next: ask a human whether lsn {c} took effect, then continue at lsn {c + 3}.")


def test_brief_escapes_control_characters_from_the_journal(run: Run) -> None:
    run.w.append(
        "intent",
        tool="write_file",
        args={"path": "a\x1b[31m.txt", "content": "x"},
        target="a\x1b[31m.txt\nFAKE LINE",
        effect="fs",
        step=0,
        pre="absent",
        post="absent",
    )
    run.w.close()
    brief = analyze(run.dir).brief
    assert "\x1b" not in brief and "\nFAKE LINE" not in brief
    assert "a?[31m.txt?FAKE LINE" in brief


def test_brief_of_a_clean_journal(run: Run) -> None:
    run.w.append("run.end", status="completed")
    run.w.close()
    assert analyze(run.dir).brief == (
        "Task: Rename getUserById to fetchUser (run r1).\nCommitted through lsn 1.\nNext: continue at lsn 2."
    )
