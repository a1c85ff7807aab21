"""The harness's ordering promises, observed on real files through the FileOps injection point.

For every tool: blobs are durable before the intent names them, the intent is written and synced
before the effect, and the commit comes only after the effect was verified.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from agenthelp import of_type, records
from walkback.agent.approvals import approve_all
from walkback.agent.demo_service import DemoService
from walkback.agent.runs import start_run
from walkback.agent.task import load_task, make_workspace
from walkback.journal.errors import BlobError
from walkback.journal.fileops import FileOps
from walkback.journal.images import INLINE_MAX, intent_image
from walkback.journal.record import sha256_bytes


class Recording(FileOps):
    """Real file operations, logged in order with the path they touch."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, bytes]] = []
        self.fds: dict[int, Path] = {}

    def open_append(self, path: Path) -> int:
        fd = super().open_append(path)
        self.fds[fd] = Path(path)
        return fd

    def open_new(self, path: Path) -> int:
        fd = super().open_new(path)
        self.fds[fd] = Path(path)
        return fd

    def write(self, fd: int, data: bytes) -> None:
        self.log.append(("write", str(self.fds[fd]), bytes(data)))
        super().write(fd, data)

    def fdatasync(self, fd: int) -> None:
        self.log.append(("sync", str(self.fds[fd]), b""))
        super().fdatasync(fd)

    def fsync(self, fd: int) -> None:
        self.log.append(("sync", str(self.fds[fd]), b""))
        super().fsync(fd)

    def replace(self, src: Path, dst: Path) -> None:
        self.log.append(("replace", str(dst), b""))
        super().replace(src, dst)

    def unlink(self, path: Path) -> None:
        self.log.append(("unlink", str(path), b""))
        super().unlink(path)

    def fsync_dir(self, path: Path) -> None:
        self.log.append(("fsync_dir", str(path), b""))
        super().fsync_dir(path)

    def journal_write(self, lsn: int) -> int:
        """Index of the log entry that wrote record ``lsn`` of the main journal."""
        for i, (op, path, data) in enumerate(self.log):
            if (
                op == "write"
                and path.endswith("run/journal.jsonl")
                and data.startswith(b'{"v":1,"lsn":%d,' % lsn)
            ):
                return i
        raise AssertionError(f"lsn {lsn} never written")


class LyingDisk(Recording):
    """Writes one byte more than asked into workspace temp files: the post hash cannot verify."""

    def write(self, fd: int, data: bytes) -> None:
        super().write(fd, bytes(data) + (b"!" if str(self.fds[fd]).endswith(".wb-tmp") else b""))


def make_task(tmp: Path, steps: list[dict[str, Any]], **extra: Any) -> Path:
    task = {
        "title": "harness test",
        "setup": {
            "files": [
                {"path": "m.py", "content": "def getUserById():\n    return 1\n"},
                {"path": "old.txt", "content": "bye\n"},
            ]
        },
        "steps": steps,
        **extra,
    }
    path = tmp / "task.json"
    path.write_text(json.dumps(task))
    make_workspace(load_task(path), tmp / "ws")
    return path


def run(tmp: Path, task: Path, ops: FileOps, **kw: Any) -> str:
    return start_run(task, tmp / "ws", approver=approve_all, run_dir=tmp / "run", ops=ops, **kw).status


def test_every_file_tool_journals_images_then_intent_then_effect_then_commit(tmp_path: Path) -> None:
    big = "x" * (INLINE_MAX + 1) + "\n"
    steps = [
        {"tool": "write_file", "args": {"path": "new/dir/a.txt", "content": "hello\n"}},
        {"tool": "replace_symbol", "args": {"path": "m.py", "old": "getUserById", "new": "fetchUser"}},
        {"tool": "ensure_line", "args": {"path": "m.py", "line": "# done"}},
        {"tool": "delete_file", "args": {"path": "old.txt"}},
        {"tool": "write_file", "args": {"path": "big.txt", "content": big}},
    ]
    task = make_task(tmp_path, steps)
    ops = Recording()
    assert run(tmp_path, task, ops) == "completed"
    recs = records(tmp_path / "run")
    intents = of_type(recs, "intent")
    assert [i["tool"] for i in intents] == [s["tool"] for s in steps]
    blobs = tmp_path / "run" / "blobs" / "sha256"
    for intent in intents:
        at = ops.journal_write(intent["lsn"])
        for which in ("pre", "post"):
            h = intent[which]
            if h == "absent":
                continue
            try:
                data = intent_image(intent, which)  # inline: durable with the intent itself
            except BlobError:
                first = min(i for i, e in enumerate(ops.log) if e[0] == "replace" and e[1].endswith(h[7:]))
                assert first < at, f"blob {h} of lsn {intent['lsn']} stored after its intent"
                data = (blobs / h[7:9] / h[7:]).read_bytes()
            assert sha256_bytes(data) == h
        assert ops.log[at + 1][:2] == ("sync", str(tmp_path / "run" / "journal.jsonl")), (
            "intent not synced first"
        )
        target = str((tmp_path / "ws" / intent["target"]).resolve())
        effect = next(
            i for i, e in enumerate(ops.log) if i > at and e[0] in ("replace", "unlink") and e[1] == target
        )
        dir_sync = next(i for i, e in enumerate(ops.log) if i > effect and e[0] == "fsync_dir")
        commit = next(r for r in recs if r["type"] == "commit" and r["ref"] == intent["lsn"])
        assert ops.journal_write(commit["lsn"]) > dir_sync
        assert commit["verified"]["post"] is True and commit["post"] == intent["post"]
    ws = tmp_path / "ws"
    assert (ws / "new/dir/a.txt").read_text() == "hello\n"
    assert (ws / "m.py").read_text() == "def fetchUser():\n    return 1\n# done\n"
    assert not (ws / "old.txt").exists()
    assert intents[3]["post"] == "absent" and intents[0]["pre"] == "absent"
    assert all("post_image" in i for i in intents[:2]) and "post_image" not in intents[4]  # too big: a blob
    assert (blobs / intents[4]["post"][7:9] / intents[4]["post"][7:]).read_text() == big


def test_a_command_runs_only_after_its_intent_is_in_the_journal(tmp_path: Path) -> None:
    probe = (
        "import sys, orjson; recs = [orjson.loads(x) for x in open(sys.argv[1], 'rb')];"
        "sys.exit(0 if recs[-1]['type'] == 'intent' and recs[-1]['args']['cmd'][-1] == sys.argv[1] else 3)"
    )
    journal = str(tmp_path / "run" / "journal.jsonl")
    task = make_task(
        tmp_path, [{"tool": "run_command", "args": {"cmd": [sys.executable, "-c", probe, journal]}}]
    )
    assert run(tmp_path, task, Recording()) == "completed"
    recs = records(tmp_path / "run")
    (intent,) = of_type(recs, "intent")
    assert intent["effect"] == "command" and intent["idempotent"] is False and intent["pre"] is None
    (commit,) = of_type(recs, "commit")
    assert commit["ref"] == intent["lsn"] and commit["result"]["exit_code"] == 0


class Observer(DemoService):
    """The real service, noting for each call whether the journal already held the keyed intent."""

    journal: Path
    seen: list[bool]

    def handle(self, method: str, path: str, key: str | None, raw: bytes) -> tuple[int, bytes, bool]:
        lines = [orjson.loads(x) for x in self.journal.read_bytes().splitlines()]
        self.seen.append(any(r["type"] == "intent" and r.get("idempotency_key") == key for r in lines))
        return super().handle(method, path, key, raw)


def test_an_external_call_carries_run_colon_lsn_and_follows_its_intent(tmp_path: Path) -> None:
    svc = Observer(tmp_path / "svc")
    svc.journal, svc.seen = tmp_path / "run" / "journal.jsonl", []
    url = svc.start()
    try:
        steps = [
            {"tool": "external_call", "args": {"method": "POST", "url": "${service}/x", "body": {"n": 1}}}
        ]
        task = make_task(tmp_path, steps)
        assert run(tmp_path, task, Recording(), service_url=url) == "completed"
    finally:
        svc.stop()
    recs = records(tmp_path / "run")
    (intent,) = of_type(recs, "intent")
    assert intent["idempotency_key"] == f"{recs[0]['run']}:{intent['lsn']}"
    assert svc.seen == [True]
    assert [c["key"] for c in svc.calls()] == [intent["idempotency_key"]]
    (commit,) = of_type(recs, "commit")
    assert commit["result"]["status"] == 201 and commit["verified"]["result"] is True


@pytest.mark.parametrize(
    "step,why",
    [
        (
            {"tool": "write_file", "args": {"path": "a.txt", "content": "x"}, "check": "exit 4"},
            "check `exit 4` exited 4",
        ),
        (
            {"tool": "run_command", "args": {"cmd": [sys.executable, "-c", "raise SystemExit(1)"]}},
            "exit code 1",
        ),
        (
            {"tool": "external_call", "args": {"method": "POST", "url": "${service}/status/500"}},
            "HTTP status 500",
        ),
    ],
    ids=["check", "command", "http"],
)
def test_nothing_is_committed_unless_verified(
    tmp_path: Path, service: DemoService, step: dict[str, Any], why: str
) -> None:
    task = make_task(tmp_path, [step, {"tool": "write_file", "args": {"path": "never.txt", "content": "x"}}])
    assert run(tmp_path, task, Recording(), service_url=service.url) == "failed"
    recs = records(tmp_path / "run")
    assert of_type(recs, "commit") == []
    (fail,) = of_type(recs, "fail")
    assert fail["error"] == why
    assert recs[-1]["type"] == "run.end" and recs[-1]["status"] == "failed"
    assert len(of_type(recs, "intent")) == 1, "the run went on after a failed verification"
    assert not (tmp_path / "ws" / "never.txt").exists()


def test_a_write_whose_post_hash_does_not_verify_is_not_committed(tmp_path: Path) -> None:
    task = make_task(tmp_path, [{"tool": "write_file", "args": {"path": "a.txt", "content": "x"}}])
    assert run(tmp_path, task, LyingDisk()) == "failed"
    recs = records(tmp_path / "run")
    (fail,) = of_type(recs, "fail")
    assert fail["verified"]["post"] is False and "post hash" in fail["error"]
    assert of_type(recs, "commit") == []


def test_a_check_and_a_test_command_leave_test_results(tmp_path: Path) -> None:
    steps = [
        {"tool": "write_file", "args": {"path": "a.txt", "content": "x"}, "check": "test -f a.txt"},
        {"tool": "run_command", "args": {"cmd": [sys.executable, "-c", "print('ok')"]}, "test": True},
    ]
    task = make_task(tmp_path, steps)
    assert run(tmp_path, task, Recording()) == "completed"
    recs = records(tmp_path / "run")
    results = of_type(recs, "test.result")
    assert [(r["cmd"], r["exit_code"], r["passed"]) for r in results] == [
        ("test -f a.txt", 0, True),
        (f"{sys.executable} -c print('ok')", 0, True),
    ]
    first_commit = of_type(recs, "commit")[0]
    assert first_commit["verified"]["check"] == {"cmd": "test -f a.txt", "exit_code": 0}
    assert results[0]["lsn"] < first_commit["lsn"]
