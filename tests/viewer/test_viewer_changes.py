"""timeline.changes: hash badges against the journal, the blob store, the workspace and git HEAD."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sample_runs import APP_V1, APP_V2, build_run
from walkback.journal import JournalWriter
from walkback.journal.blobs import BlobStore
from walkback.journal.record import sha256_bytes
from walkback.timeline.changes import change_view, side_by_side, unified
from walkback.timeline.query import Query, file_rows, select

from walkback import importers


def calls(session, target: str) -> list[int]:
    return [int(i) for i in select(session, Query(kinds=frozenset({"tool_call"}), files=frozenset({target})))]


def labels(view) -> dict[str, bool | None]:
    return {b.label: b.ok for b in view.badges}


def test_clean_change_has_all_green_badges_and_a_diff(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    s = importers.load(run.dir)
    first, second = calls(s, "src/app.py")
    v = change_view(s, second, history=file_rows(s)["src/app.py"])
    assert v is not None and v.previous == first
    assert labels(v) == {
        f"pre = post of step {first + 1}": True,
        "pre blob matches hash": True,
        "post blob matches hash": True,
    }
    assert v.pre_text == APP_V1 and v.post_text == APP_V2
    diff = unified(v)
    assert ("-", "-def get_user_by_id(uid):") in diff and ("+", "+def fetch_user(uid):") in diff
    rows = side_by_side(v)
    assert ("replace", "def get_user_by_id(uid):", "def fetch_user(uid):") in rows
    created = change_view(s, first, history=file_rows(s)["src/app.py"])
    assert created is not None and created.pre_text == b"" and labels(created)["pre absent (no file)"] is True
    assert labels(created)["first change of this file in the session"] is None


def test_unrecorded_edit_between_changes_is_flagged(tmp_path: Path) -> None:
    w = JournalWriter.create(tmp_path / "run", task="t")
    a = w.append(
        "intent",
        tool="write_file",
        target="f.txt",
        args={"path": "f.txt"},
        effect="fs",
        pre="absent",
        post=w.blobs.put(b"one\n"),
    )
    w.append("commit", ref=a, post=sha256_bytes(b"one\n"), verified={"post": True, "check": None})
    # someone edited f.txt outside the journal: the next pre is not the last post
    b = w.append(
        "intent",
        tool="write_file",
        target="f.txt",
        args={"path": "f.txt"},
        effect="fs",
        pre=w.blobs.put(b"one, edited\n"),
        post=w.blobs.put(b"two\n"),
    )
    w.close()
    s = importers.load(tmp_path / "run")
    v = change_view(s, b, history=file_rows(s)["f.txt"])
    assert v is not None
    bad = [x for x in v.badges if x.label.startswith("pre differs from post of step")]
    assert len(bad) == 1 and bad[0].ok is False


def test_missing_and_tampered_blobs(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    s = importers.load(run.dir)
    _, second = calls(s, "src/app.py")
    store = BlobStore(run.dir / "blobs")
    store.path(sha256_bytes(APP_V1)).write_bytes(b"tampered")
    store.path(sha256_bytes(APP_V2)).unlink()
    v = change_view(s, second, history=file_rows(s)["src/app.py"])
    assert v is not None and v.pre_text is None and v.post_text is None
    got = labels(v)
    assert got["post blob missing"] is False
    assert any(k.startswith("pre blob") and ok is False for k, ok in got.items())


def test_workspace_and_git_head_badges(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    ws = run.workspace
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True
    )
    s = importers.load(run.dir)
    first, second = calls(s, "src/app.py")
    hist = file_rows(s)["src/app.py"]
    now = labels(change_view(s, second, history=hist, workspace=ws))
    assert now["workspace now = post"] is True and now["git HEAD = post"] is True
    older = labels(change_view(s, first, history=hist, workspace=ws))
    assert older[f"workspace now = post of later step {second + 1}"] is None
    (ws / "src" / "app.py").write_bytes(b"changed by hand\n")
    changed = labels(change_view(s, second, history=hist, workspace=ws))
    assert changed["workspace file changed since"] is False and changed["git HEAD = post"] is True


def test_targets_outside_the_workspace_are_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(secret)
    w = JournalWriter.create(tmp_path / "run", task="t")
    evil = [
        w.append(
            "intent",
            tool="write_file",
            target=t,
            args={"path": t},
            effect="fs",
            pre="absent",
            post=w.blobs.put(b"x"),
        )
        for t in ("../secret.txt", str(secret), "link")
    ]
    w.close()
    s = importers.load(tmp_path / "run")
    for i in evil:
        v = change_view(s, i, workspace=ws)
        assert v is not None
        assert [b.label for b in v.badges if "workspace" in b.label] == ["target is outside the workspace"]


@pytest.mark.parametrize("kind", ["binary", "large"])
def test_binary_and_huge_images_are_not_diffed(tmp_path: Path, kind: str) -> None:
    w = JournalWriter.create(tmp_path / "run", task="t")
    data = b"\x00\x01\x02" * 10 if kind == "binary" else b"x\n" * 1_100_000
    i = w.append(
        "intent",
        tool="write_file",
        target="f",
        args={"path": "f"},
        effect="fs",
        pre="absent",
        post=w.blobs.put(data),
    )
    w.close()
    v = change_view(importers.load(tmp_path / "run"), i)
    assert v is not None and (v.binary if kind == "binary" else v.too_large)
