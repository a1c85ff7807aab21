"""Hook journals and Claude Code transcripts for the hooked-session tests, in the contract's shape.

:class:`HookJournal` writes what the hook command writes for one agent session
(``$WALKBACK_HOME/hooks/<agent>/<session>/journal.jsonl``, docs/hooks.md) with the real journal
writer: a file intent with the pre hash, the expected post hash and both images, fsynced before the
test makes the effect; a shell intent with a snapshot of the working tree written through a
temporary index (the user's index untouched); a commit with the observed hash checked against the
expected one. :class:`Transcript` writes the Claude Code records the agent itself leaves (a user
prompt, assistant ``tool_use`` blocks, user ``tool_result`` blocks), so a test can stop it anywhere
a crash would.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from walkback.journal import ABSENT, JournalWriter, sha256_bytes
from walkback.journal.images import image_fields

GIT = ["git", "-c", "user.name=walkback", "-c", "user.email=dev@walkback.invalid"]


def git(ws: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        [*GIT, "-C", str(ws), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def make_repo(ws: Path, files: dict[str, bytes]) -> str:
    """A git repository with ``files`` committed; returns HEAD."""
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


def snapshot_tree(ws: Path) -> str:
    """The tree of the tracked and untracked-not-ignored files, through a temporary index."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(ws, "add", "-A", env=env)
        return git(ws, "write-tree", env=env)


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def hook_dir(home: Path, agent: str, session: str) -> Path:
    return home / "hooks" / agent / session


@dataclass
class HookJournal:
    """One hooked session's journal, written as the hook command writes it."""

    dir: Path
    ws: Path
    w: JournalWriter

    @classmethod
    def create(
        cls, home: Path, session: str, ws: Path, *, agent: str = "claude-code", transcript: Path | None = None
    ) -> HookJournal:
        d = hook_dir(home, agent, session)
        hooked = {"agent": agent, "session": session, "transcript": str(transcript) if transcript else None}
        w = JournalWriter.create(
            d,
            task="",
            run=session,
            workspace=str(ws.resolve()),
            producer={"name": "walkback-hooks", "version": "test"},
            hooked=hooked,
        )
        return cls(d, ws, w)

    @property
    def path(self) -> Path:
        return self.dir / "journal.jsonl"

    def file_intent(self, call: str, tool: str, args: dict[str, Any], target: str, post: bytes | None) -> int:
        """Before a file tool: the target's pre hash and image, the expected post and its image."""
        p = self.ws / target
        pre = p.read_bytes() if p.exists() else None
        fields = image_fields(pre, post, self.w.blobs)
        return self.w.append(
            "intent", tool=tool, call=call, args=args, target=target, effect="fs", pre=h(pre), post=h(post),
            **fields,
        )  # fmt: skip

    def shell_intent(self, call: str, command: str, *, tool: str = "Bash") -> int:
        """Before a shell tool: the command, its cwd, and the working tree's snapshot."""
        ws = self.ws.resolve()
        snap = {"git_tree": snapshot_tree(ws), "repo": str(ws)}
        return self.w.append(
            "intent", tool=tool, call=call, args={"command": command}, target=command, effect="command",
            cwd=str(ws), snapshot=snap,
        )  # fmt: skip

    def commit(
        self, ref: int, call: str, expected: str | None = None, target: str | None = None, **extra: Any
    ) -> int:
        """After the tool: the observed hash of ``target`` checked against the expected one."""
        if target is None:
            return self.w.append("commit", ref=ref, call=call, **extra)
        p = self.ws / target
        seen = h(p.read_bytes() if p.exists() else None)
        verified = {"post": seen == expected}
        return self.w.append("commit", ref=ref, call=call, post=seen, verified=verified, **extra)

    def fail(self, ref: int, call: str, error: str) -> int:
        return self.w.append("fail", ref=ref, call=call, error=error)

    def checkpoint(self, sha: str) -> int:
        return self.w.append("checkpoint", git=sha, covers_lsn=self.w.next_lsn - 1)

    def close(self) -> None:
        self.w.close()


@dataclass
class Transcript:
    """A Claude Code transcript (``<session>.jsonl``), written record by record as the agent does."""

    path: Path
    cwd: Path
    session: str = field(default_factory=lambda: str(uuid.uuid4()))
    last: str | None = None

    def _write(self, rec: dict[str, Any]) -> None:
        u = str(uuid.uuid4())
        full = {
            "parentUuid": self.last, "isSidechain": False, "userType": "external", "cwd": str(self.cwd),
            "sessionId": self.session, "version": "2.1.197", "uuid": u, "timestamp": now(), **rec,
        }  # fmt: skip
        self.last = u
        with open(self.path, "ab") as f:
            f.write(orjson.dumps(full) + b"\n")
            f.flush()
            os.fsync(f.fileno())

    def prompt(self, text: str) -> None:
        self._write({"type": "user", "message": {"role": "user", "content": text}})

    def tool_use(self, call: str, name: str, args: dict[str, Any]) -> None:
        block = {"type": "tool_use", "id": call, "name": name, "input": args}
        self._write({"type": "assistant", "message": {
            "model": "claude-test", "id": "msg_" + call, "type": "message", "role": "assistant",
            "content": [block], "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
        }})  # fmt: skip

    def tool_result(self, call: str, content: str, *, error: bool = False, result: Any = None) -> None:
        block = {"tool_use_id": call, "type": "tool_result", "content": content, "is_error": error}
        rec: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": [block]}}
        if result is not None:
            rec["toolUseResult"] = result
        self._write(rec)
