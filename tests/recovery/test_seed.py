"""The two seed dialects: read in their shape, and appended to in their shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from recovery_helpers import git, h, make_repo
from walkback.agent.demo_service import DemoService
from walkback.journal import read_records, scan
from walkback.journal.recovery import analyze, recover

A_OLD = b"export const a = getUserById(1);\n"
A_NEW = b"export const a = fetchUser(1);\n"
B_OLD = b"import { getUserById } from './users';\nconst getUserByIdx = 2;\n"
B_NEW = b"import { fetchUser } from './users';\nconst getUserByIdx = 2;\n"


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def rename(lsn: int, file: str, old: bytes, new: bytes) -> dict[str, Any]:
    return {
        "lsn": lsn,
        "type": "intent",
        "tool": "replace_symbol",
        "file": file,
        "old": "getUserById",
        "new": "fetchUser",
        "pre": h(old),
        "post": h(new),
    }


def lsn_journal(tmp_path: Path, b_post: bytes = B_NEW) -> tuple[Path, Path]:
    """The seed's lsn dialect exactly as written: lsn 1 the plan, then one lsn per file whose
    commit carries that lsn (002_22b8073affcbbc91.txt)."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src/a.ts").write_bytes(A_NEW)  # committed
    (ws / "src/b.ts").write_bytes(B_OLD)  # killed before the edit
    (ws / "src/c.ts").write_bytes(A_NEW)  # edited, commit lost
    j = tmp_path / "seed-lsn.jsonl"
    write_lines(
        j,
        [
            {"lsn": 1, "type": "plan", "task": "Rename getUserById to fetchUser", "files": 3},
            rename(2, "src/a.ts", A_OLD, A_NEW),
            {"lsn": 2, "type": "commit", "verified": "hash==post && tsc --noEmit ok"},
            rename(3, "src/c.ts", A_OLD, A_NEW),
            rename(4, "src/b.ts", B_OLD, b_post),
        ],
    )
    return j, ws


def test_lsn_dialect_redo_is_computed_from_the_current_content(tmp_path: Path) -> None:
    j, ws = lsn_journal(tmp_path)
    assert scan(j).intact
    plan = analyze(j, workspace=ws)
    assert [(f.lsn, f.target, f.finding, f.action) for f in plan.findings] == [
        (3, "src/c.ts", "applied", "commit"),
        (4, "src/b.ts", "not_applied", "redo"),
    ]
    assert "replace_symbol applied to the current content" in plan.findings[1].detail
    assert (plan.committed_through, plan.next_lsn) == (2, 5)
    plan = recover(j, workspace=ws, apply=True)
    assert (ws / "src/b.ts").read_bytes() == B_NEW  # `getUserByIdx` kept: an identifier rename
    new = read_lines(j)[5:]
    assert [(r["lsn"], r["type"], r.get("ref")) for r in new] == [
        (5, "recovery", 3),
        (3, "commit", None),  # the seed's shape: the commit carries the lsn of the intent it closes
        (6, "recovery", 4),
        (4, "commit", None),
        (7, "recovery.brief", None),  # the resume brief, journaled; it takes a new lsn
    ]
    assert all("v" not in r and "h" not in r and "prev" not in r for r in new)  # still the seed shape
    assert new[3]["recovered"] is True and new[3]["post"] == h(B_NEW)
    records, res = read_records(j)
    assert res.dialect == "lsn" and res.intact
    assert [r.closes for r in records if r.data["type"] == "commit"] == [2, 3, 4]
    assert analyze(j, workspace=ws).findings == []


def test_lsn_dialect_commits_naming_their_intent_by_ref_or_intent_still_close_it(tmp_path: Path) -> None:
    j, ws = lsn_journal(tmp_path)
    write_lines(
        j,
        [
            {"lsn": 1, "type": "plan", "task": "Rename getUserById to fetchUser"},
            rename(2, "src/a.ts", A_OLD, A_NEW),
            {"lsn": 3, "type": "commit", "intent": 2},  # a commit taking a new lsn, naming its intent
            rename(4, "src/c.ts", A_OLD, A_NEW),
            {"lsn": 5, "type": "commit", "ref": 4},
            rename(6, "src/b.ts", B_OLD, B_NEW),
        ],
    )
    records, res = read_records(j)
    assert res.intact and [r.closes for r in records] == [None, None, 2, None, 4, None]
    assert [f.lsn for f in analyze(j, workspace=ws).findings] == [6]


def test_lsn_dialect_a_commit_for_an_lsn_never_intended_is_damage(tmp_path: Path) -> None:
    j, _ = lsn_journal(tmp_path)
    recs = read_lines(j)
    write_lines(j, [*recs[:3], {"lsn": 1, "type": "commit"}, *recs[3:]])
    res = scan(j)
    assert [(d.line, d.reason) for d in res.corrupt] == [(4, "commit for lsn 1, which no intent opened")]


def test_lsn_dialect_computed_redo_is_refused_when_it_does_not_hash_to_post(tmp_path: Path) -> None:
    j, ws = lsn_journal(tmp_path, b_post=b"something else\n")
    plan = recover(j, workspace=ws, apply=True)
    f = plan.findings[1]
    assert (f.lsn, f.finding, f.action) == (4, "not_applied", "ask_human")
    assert (ws / "src/b.ts").read_bytes() == B_OLD


def test_lsn_dialect_reads_from_a_checkpoint_carrying_the_lsn_it_covers(tmp_path: Path) -> None:
    j, ws = lsn_journal(tmp_path)
    recs = read_lines(j)
    recs.insert(3, {"lsn": 2, "type": "checkpoint", "git": "0" * 40})  # after intent 2's commit
    write_lines(j, recs)
    assert scan(j).intact
    plan = analyze(j, workspace=ws)
    assert plan.read_from == 2
    assert [f.lsn for f in plan.findings] == [3, 4]


def seq_journal(tmp_path: Path, url: str) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "out.txt").write_bytes(b"done\n")
    j = tmp_path / "seed-seq.jsonl"
    args = {"method": "POST", "url": url + "/charges", "body": {"amount": 5}}
    write_lines(
        j,
        [
            {"seq": 1, "task_id": "t1", "tool": "http_post", "args": args, "idempotency_key": "t1:1"},
            {"seq": 1, "result": {"status": 201}, "status": "ok"},
            {"seq": 2, "task_id": "t1", "tool": "http_post", "args": args, "idempotency_key": "t1:2"},
            {
                "seq": 3,
                "task_id": "t1",
                "tool": "write_file",
                "args": {"path": "out.txt", "content": "done\n"},
            },
            {"seq": 4, "task_id": "t1", "tool": "http_post", "args": args},
        ],
    )
    return j, ws


def test_seq_dialect_findings_use_the_seq(tmp_path: Path, service: DemoService) -> None:
    j, ws = seq_journal(tmp_path, service.url)
    plan = analyze(j, workspace=ws)
    assert [(f.lsn, f.finding, f.action) for f in plan.findings] == [
        (2, "in_doubt", "reissue"),
        (3, "applied", "commit"),
        (4, "in_doubt", "ask_human"),
    ]
    assert (plan.committed_through, plan.next_lsn) == (1, 5)
    assert plan.task == "t1" and "Committed through seq 1." in plan.brief
    assert plan.to_json()["findings"][0]["lsn"] == 2


def test_seq_dialect_is_appended_to_in_its_own_shape(tmp_path: Path, service: DemoService) -> None:
    j, ws = seq_journal(tmp_path, service.url)
    plan = recover(j, workspace=ws, apply=True)
    assert service.effects_by_key() == {"t1:2": 1}
    new = read_lines(j)[5:]
    decisions = [r for r in new if r.get("type") == "recovery"]
    assert [(r["seq"], r["ref"], r["action"]) for r in decisions] == [
        (5, 2, "reissue"),
        (6, 3, "commit"),
        (7, 4, "ask_human"),
    ]
    assert all("tool" not in r for r in decisions)  # a record with `tool` is an intent in this dialect
    results = [r for r in new if "status" in r]
    assert [(r["seq"], r["status"], r["recovered"]) for r in results] == [(2, "ok", True), (3, "ok", True)]
    res = scan(j)
    assert res.dialect == "seq" and res.intact
    assert new[-1]["type"] == "recovery.brief" and new[-1]["seq"] == 8  # the brief takes the next seq
    assert plan.next_lsn == 9
    again = recover(j, workspace=ws, apply=True)
    assert [(f.lsn, f.finding) for f in again.findings] == [(4, "in_doubt")]
    assert len(read_lines(j)) == 5 + len(new)  # nothing appended the second time


def seed_004_journal(tmp_path: Path, url: str) -> Path:
    """The seq dialect exactly as 004_63b09f98869121be.txt writes it: an ``http_post`` intent with its
    url and body in ``args`` and an idempotency key, no ``method`` (the tool says it)."""
    j = tmp_path / "run7.jsonl"
    charges = url + "/charges"
    write_lines(
        j,
        [
            {"seq": 1, "task_id": "run7", "tool": "http_post", "args": {"url": charges, "body": {"n": 1}},
             "idempotency_key": "run7:1"},
            {"seq": 1, "result": {"status": 201}, "status": "ok"},
            {"seq": 2, "task_id": "run7", "tool": "http_post", "args": {"url": charges, "body": {"n": 2}},
             "idempotency_key": "run7:2"},
            {"seq": 3, "task_id": "run7", "tool": "send_email", "args": {"to": "ops@example.com"},
             "idempotency_key": "run7:3"},
        ],
    )  # fmt: skip
    return j


def test_a_keyed_http_tool_intent_is_reissued_once_with_its_key(tmp_path: Path, service: DemoService) -> None:
    from walkback.journal.effects import call

    j = seed_004_journal(tmp_path, service.url)
    call("POST", service.url + "/charges", {"n": 2}, "run7:2")  # the call had landed before the crash
    plan = analyze(j)
    assert [(f.lsn, f.finding, f.action) for f in plan.findings] == [
        (2, "in_doubt", "reissue"),
        (3, "in_doubt", "ask_human"),
    ]
    assert "POST " + service.url + "/charges" in plan.findings[0].detail
    assert "cannot reissue tool 'send_email'" in plan.findings[1].detail
    recover(j, apply=True)
    assert service.effects_by_key() == {"run7:2": 1}  # the service answered from its cache
    reissued = [c for c in service.calls() if c["key"] == "run7:2"]
    assert [(c["method"], c["effect"]) for c in reissued] == [("POST", True), ("POST", False)]
    results = [r for r in read_lines(j)[4:] if "status" in r and "type" not in r]
    assert [(r["seq"], r["status"], r["result"]["replayed"]) for r in results] == [(2, "ok", True)]
    assert [(f.lsn, f.action) for f in analyze(j).findings] == [(3, "ask_human")]


def test_an_unkeyed_external_effect_stays_in_doubt(tmp_path: Path, service: DemoService) -> None:
    j = tmp_path / "run8.jsonl"
    write_lines(j, [{"seq": 1, "task_id": "run8", "tool": "http_post", "args": {"url": service.url + "/x"}}])
    (f,) = recover(j, apply=True).findings
    assert (f.finding, f.action) == ("in_doubt", "ask_human") and "no idempotency key" in f.detail
    assert service.calls() == []


# -- the torn case: restore from the commit the journal names, then redo --------------------------
def torn_rename(tmp_path: Path, *, base: bool, checkpoint: str | None) -> tuple[Path, Path, str]:
    """The rename article's torn case in a real git repository: the plan says ``"base":"git:<sha>"``
    (short sha, as the article writes it), file 1 was renamed and committed, file 2 was half
    written when the process died. ``checkpoint``: a ``checkpoint`` record after file 1 whose
    ``git`` is that commit (``"sha"`` bare, ``"git:sha"`` prefixed) or None for none."""
    ws = tmp_path / "ws"
    sha = make_repo(ws, {"src/a.ts": A_OLD, "src/b.ts": B_OLD})
    short = sha[:7]
    (ws / "src/a.ts").write_bytes(A_NEW)
    (ws / "src/b.ts").write_bytes(B_NEW[:17])  # torn: neither pre nor post
    plan: dict[str, Any] = {"lsn": 1, "type": "plan", "task": "rename getUserById -> fetchUser", "files": 2}
    if base:
        plan["base"] = f"git:{short}"
    records = [
        plan,
        rename(2, "src/a.ts", A_OLD, A_NEW),
        {"lsn": 2, "type": "commit", "verified": "hash==post"},
    ]
    if checkpoint is not None:
        records.append({"lsn": 2, "type": "checkpoint", "git": checkpoint.replace("sha", short)})
    records.append(rename(3, "src/b.ts", B_OLD, B_NEW))
    j = tmp_path / "run" / "journal.jsonl"
    j.parent.mkdir()
    write_lines(j, records)
    return j, ws, short


@pytest.mark.parametrize(
    ("base", "checkpoint", "source"),
    [(True, None, "base"), (False, "sha", "checkpoint"), (False, "git:sha", "checkpoint")],
    ids=["plan base", "checkpoint git", "checkpoint git: prefixed"],
)
def test_a_torn_file_is_restored_from_the_named_commit_and_redone(
    tmp_path: Path, base: bool, checkpoint: str | None, source: str
) -> None:
    j, ws, short = torn_rename(tmp_path, base=base, checkpoint=checkpoint)
    (f,) = analyze(j, workspace=ws).findings
    assert (f.lsn, f.finding, f.action) == (3, "torn", "restore_redo"), f.detail
    assert f"restore pre from {source} {short}" in f.detail
    plan = recover(j, workspace=ws, apply=True)
    assert (ws / "src/b.ts").read_bytes() == B_NEW and (ws / "src/a.ts").read_bytes() == A_NEW
    assert f"restored from {source} {short}" in plan.brief and "committed (lsn 3)" in plan.brief
    new = read_lines(j)[len(read_lines(j)) - 3 :]
    assert [(r["lsn"], r["type"]) for r in new] == [(4, "recovery"), (3, "commit"), (5, "recovery.brief")]
    assert new[0]["action"] == "restore_redo" and new[1]["post"] == h(B_NEW)
    assert analyze(j, workspace=ws).findings == []


def test_a_named_commit_that_does_not_hold_the_pre_image_is_not_trusted(tmp_path: Path) -> None:
    """Our own case: the plan's base is a later commit, where the file is already something else;
    nothing hashes to pre, so a human decides and the file is left as it is."""
    j, ws, _ = torn_rename(tmp_path, base=False, checkpoint=None)
    (ws / "src/b.ts").write_bytes(b"rewritten by someone\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "later")
    later = git(ws, "rev-parse", "HEAD")
    (ws / "src/b.ts").write_bytes(B_NEW[:17])
    recs = read_lines(j)
    recs[0]["base"] = f"git:{later}"
    write_lines(j, recs)
    plan = recover(j, workspace=ws, apply=True)
    (f,) = plan.findings
    assert (f.finding, f.action) == ("torn", "ask_human") and (ws / "src/b.ts").read_bytes() == B_NEW[:17]
    recs[0]["base"] = "git:not-a-sha"  # a base that names no commit is no source either
    write_lines(j, recs)
    assert [x.action for x in analyze(j, workspace=ws).findings] == ["ask_human"]
