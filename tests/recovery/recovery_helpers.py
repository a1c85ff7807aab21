"""Builders for recovery tests: real git workspaces, real journals written as the schema says.

``Run.file_intent`` does what the agent does before a file effect: compute the new content, put
both images in the run's blob store, append the intent (fsynced). The test then puts the
workspace in the state a crash would leave (nothing, the post image, something torn).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.journal import ABSENT, JournalWriter, sha256_bytes

GIT = ["git", "-c", "user.name=walkback", "-c", "user.email=dev@walkback.invalid"]
BASE_FILES = {
    "src/users.py": b"def getUserById(i):\n    return i\n\nx = getUserById(1)\n",
    "src/keep.py": b"KEEP = 1\n",
    "README.md": b"# demo\n",
}


def git(ws: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, "-C", str(ws), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(ws: Path, files: dict[str, bytes] = BASE_FILES) -> str:
    """A git repository with ``files`` committed; returns the commit sha (the run's base_ref)."""
    ws.mkdir(parents=True, exist_ok=True)
    git(ws, "init", "-q", "-b", "main")
    for name, data in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(data)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    return git(ws, "rev-parse", "HEAD")


def h(data: bytes | None) -> str:
    return ABSENT if data is None else sha256_bytes(data)


@dataclass
class Run:
    """A run directory with an open writer, and the workspace it edits."""

    dir: Path
    ws: Path
    w: JournalWriter
    base: str

    @property
    def journal(self) -> Path:
        return self.dir / "journal.jsonl"

    def file_intent(
        self, tool: str, path: str, after: bytes | None, *, step: int = 0, blobs: bool = True, **args: Any
    ) -> int:
        """The agent's intent for a file tool whose result is ``after`` (None: deleted)."""
        p = self.ws / path
        old = p.read_bytes() if p.exists() else None
        if blobs:
            for data in (old, after):
                if data is not None:
                    self.w.blobs.put(data)
        return self.w.append(
            "intent",
            tool=tool,
            args={"path": path, **args},
            target=path,
            effect="fs",
            step=step,
            pre=h(old),
            post=h(after),
        )

    def commit(self, lsn: int, post: str | None = None) -> int:
        return self.w.append(
            "commit", ref=lsn, post=post, verified={"post": True, "check": None, "result": None}
        )

    def external(self, url: str, body: Any = None, *, keyed: bool = True, step: int = 0) -> int:
        fields: dict[str, Any] = {}
        if keyed:
            fields["idempotency_key"] = f"{self.w.run}:{self.w.next_lsn}"
        return self.w.append(
            "intent",
            tool="external_call",
            args={"method": "POST", "url": url, "body": body},
            target=url,
            effect="external",
            step=step,
            pre=None,
            post=None,
            **fields,
        )

    def command(self, cmd: list[str], *, idempotent: bool = False, step: int = 0) -> int:
        return self.w.append(
            "intent",
            tool="run_command",
            args={"cmd": cmd, "cwd": "."},
            target=" ".join(cmd),
            effect="command",
            step=step,
            pre=None,
            post=None,
            idempotent=idempotent,
        )

    def checkpoint(self) -> int:
        git(self.ws, "add", "-A")
        git(self.ws, "commit", "-q", "--allow-empty", "-m", "checkpoint")
        sha = git(self.ws, "rev-parse", "HEAD")
        return self.w.append(
            "checkpoint", git=sha, branch=f"walkback/{self.w.run}", covers_lsn=self.w.next_lsn
        )

    def records(self) -> list[dict[str, Any]]:
        return [orjson.loads(x) for x in self.journal.read_bytes().splitlines() if x.strip()]


@contextmanager
def hold_lock(run_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another live process holding the run's lock (as a running agent does)."""
    code = (
        "import sys, time; from journal.runlock import RunLock; RunLock(sys.argv[1]).acquire();"
        " print('held', flush=True); time.sleep(60)"
    )
    p = subprocess.Popen([sys.executable, "-c", code, str(run_dir)], stdout=subprocess.PIPE)
    try:
        assert p.stdout is not None and p.stdout.readline() == b"held\n"
        yield p
    finally:
        p.kill()
        p.wait()
