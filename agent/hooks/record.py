"""A hook, journaled: the agent-neutral core every adapter hands its :class:`~agent.hooks.adapter.Hook` to.

The session's journal is ``$WALKBACK_HOME/hooks/<agent>/<session>/journal.jsonl``
(:mod:`journal.hookpaths`), appended under its lock by whichever hook process runs
(:class:`journal.appender.Appender`). Before a file tool: one intent per target with the pre hash,
the expected post hash where the adapter can compute it, and the images (journal/images.py rule),
all durable before this returns. Before a shell tool: an intent with a snapshot of the tree. After:
a commit with the observed hash checked against the expected one, or a ``fail``.

A post hook finds its intents by call id in ``calls/<id>.json`` beside the journal, which the pre
hook wrote (a cache: when it is missing, the journal is searched).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from walkback.journal.appender import Appender
from walkback.journal.hookpaths import safe_id, session_dir
from walkback.journal.images import image_fields
from walkback.journal.line import ABSENT, sha256_bytes

from walkback import __version__

from .adapter import (
    COMMAND,
    COMPACT,
    FAIL,
    FS,
    POST,
    PRE,
    SPAWN,
    SPAWN_END,
    START,
    Call,
    Hook,
    Unknown,
    synthesized_id,
)

PRODUCER = {"name": "walkback-hooks", "version": __version__}
CALLS = "calls"
"""Folder beside the journal: one file per open call, naming its intents (lsn, target, expected post)."""
JOURNALED = frozenset({PRE, POST, FAIL, SPAWN, SPAWN_END, COMPACT, START})
"""The events that write to the journal (the others are read and left alone); a session start
writes only the header of a session that has none."""


class HookError(Exception):
    """The hook cannot do what the event asks (a journal or a snapshot could not be written)."""


def _run_dir(agent: str, hook: Hook) -> Path:
    """The session's run directory (raises :class:`HookError` for a session id that names none)."""
    folder = session_dir(agent, hook.session)
    if folder is None:
        raise HookError(f"session id {hook.session[:80]!r} cannot name a journal folder")
    return folder


def journal(agent: str, hook: Hook) -> int | None:
    """Journal one hook; return the lsn of the record it wrote, None when the event writes none.

    Raises:
        JournalWriteFailed: the journal (or a blob) could not be written or made durable.
        HookError: the session cannot be journaled (its id, a snapshot's git failure).
    """
    if hook.event not in JOURNALED:
        return None
    if hook.event in (PRE, POST, FAIL) and (hook.call is None or hook.call.effect not in (FS, COMMAND)):
        return None
    folder = _run_dir(agent, hook)
    command = hook.event == PRE and hook.call is not None and hook.call.effect == COMMAND
    snap = _snapshot(hook, folder) if command else None
    with Appender(folder) as a:
        if a.empty:
            start(a, agent, hook)
        if hook.event == PRE:
            return _intents(a, hook, snap)
        if hook.event in (POST, FAIL):
            return _close(a, hook)
        if hook.event == SPAWN:
            return _spawn(a, hook)
        if hook.event == SPAWN_END:
            return _spawn_end(a, hook)
        if hook.event == COMPACT:
            return _checkpoint(a, hook)
    return None


def start(a: Appender, agent: str, hook: Hook, task: str = "") -> int:
    """The session's ``run.start`` header (lsn 0)."""
    a.run, a.agent = hook.session, "main"
    hooked = {"agent": agent, "session": hook.session, "transcript": _absolute(hook.transcript, hook)}
    return a.append(
        "run.start",
        journal_id=os.urandom(16).hex(),
        task=task,
        producer=PRODUCER,
        workspace=os.path.abspath(hook.workspace),
        hooked=hooked,
    )


def _absolute(path: str | None, hook: Hook) -> str | None:
    return None if path is None else os.path.join(os.path.abspath(hook.workspace), os.path.expanduser(path))


def _relative(path: str, workspace: str) -> str:
    """``path`` relative to the workspace when it is inside it, else absolute."""
    ws = os.path.abspath(workspace)
    full = os.path.normpath(os.path.join(ws, path))
    inside = full == ws or full.startswith(ws.rstrip(os.sep) + os.sep)
    return os.path.relpath(full, ws) if inside else full


def _read(path: str) -> bytes | None:
    """A file's content, None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _snapshot(hook: Hook, folder: Path) -> dict[str, Any]:
    """The tree a command starts from, taken before the journal's lock is: a big repository's
    ``git add`` must not hold up the parallel hooks of other calls (the temp index is per process,
    blobs are content-addressed)."""
    from walkback.journal.blobs import BlobStore
    from walkback.journal.fileops import OS

    from .snapshot import snapshot

    assert hook.call is not None
    try:
        OS.mkdir(folder)
        return snapshot(hook.call.cwd or hook.workspace, folder, BlobStore(folder / "blobs"))
    except Exception as e:  # a git that fails: the command is still journaled, without a snapshot
        return {"error": str(e).splitlines()[0][:200] if str(e) else type(e).__name__}


def _intents(a: Appender, hook: Hook, snap: dict[str, Any] | None) -> int:
    """The intents of a call about to run (durable on return); the last one's lsn."""
    call = hook.call
    assert call is not None
    call_id = call.id or synthesized_id(a.next_lsn, call.args)
    if call.effect == COMMAND:
        opened = _command_intent(a, hook, call, call_id, snap or {})
    else:
        opened = _file_intents(a, hook, call, call_id)
    _remember(a.run_dir, call, call_id, opened)
    return int(opened[-1][0])


def _command_intent(
    a: Appender, hook: Hook, call: Call, call_id: str, snap: dict[str, Any]
) -> list[list[Any]]:
    cwd = call.cwd or hook.workspace
    lsn = a.append(
        "intent",
        agent=hook.agent,
        tool=call.tool,
        call=call_id,
        args=call.args,
        effect=COMMAND,
        cwd=cwd,
        snapshot=snap,
    )
    return [[lsn, None, None]]


def _file_intents(a: Appender, hook: Hook, call: Call, call_id: str) -> list[list[Any]]:
    """One intent per target: its pre hash and image, and the expected post where computable."""
    opened: list[list[Any]] = []
    n = len(call.targets)
    for i, target in enumerate(call.targets):
        full = os.path.join(os.path.abspath(hook.workspace), target.path)
        pre = _read(full)
        fields: dict[str, Any] = {"pre": ABSENT if pre is None else sha256_bytes(pre)}
        post: bytes | None = None
        if target.expect is not None:
            try:
                post = target.expect(pre)
                fields["post"] = ABSENT if post is None else sha256_bytes(post)
            except Unknown:
                pass
        fields.update(image_fields(pre, post if "post" in fields else None, a.blobs))
        if n > 1:
            fields["part"] = [i, n]
        lsn = a.append(
            "intent",
            agent=hook.agent,
            tool=call.tool,
            call=call_id,
            args=call.args,
            target=_relative(target.path, hook.workspace),
            effect=FS,
            **fields,
        )
        opened.append([lsn, full, fields.get("post")])
    return opened


def _close(a: Appender, hook: Hook) -> int | None:
    call = hook.call
    assert call is not None
    found = _recall(a, call)
    if found is None:
        return None  # no intent of this call: its pre hook never ran (installed mid-session)
    call_id, opened = found
    lsn = None
    for ref, full, expected in opened:
        if hook.event == FAIL:
            lsn = a.append("fail", ref=ref, agent=hook.agent, call=call_id, error=hook.error or "failed")
        elif full is None:
            lsn = a.append("commit", ref=ref, agent=hook.agent, call=call_id, result=hook.result or {})
        else:
            content = _read(full)
            observed = ABSENT if content is None else sha256_bytes(content)
            fields: dict[str, Any] = {"post": observed}
            if expected is not None:
                fields["verified"] = {"post": observed == expected}
            lsn = a.append("commit", ref=ref, agent=hook.agent, call=call_id, **fields)
    return lsn


def _spawn(a: Appender, hook: Hook) -> int:
    lsn = a.append(
        "agent.spawn",
        child_agent=hook.child,
        transcript=_absolute(hook.child_transcript, hook),
        task=hook.text or "",
    )
    _remember(a.run_dir, None, f"spawn.{hook.child}", [[lsn, None, None]])
    return lsn


def _spawn_end(a: Appender, hook: Hook) -> int:
    opened = _take(a.run_dir, f"spawn.{hook.child}")
    ref = int(opened[0][0]) if opened else None
    fields: dict[str, Any] = {"child_agent": hook.child, "outcome": hook.text or "stopped"}
    if hook.child_transcript:
        fields["transcript"] = _absolute(hook.child_transcript, hook)
    if hook.result:
        fields["result"] = hook.result
    return a.append("agent.end", ref=ref, **fields)


def _checkpoint(a: Appender, hook: Hook) -> int:
    """Checkpoint first, compact second: the commit and its record are durable before returning."""
    from .snapshot import checkpoint, snapshot

    lsn = a.next_lsn
    ref = f"refs/walkback/{safe_id(hook.session)}/{lsn}"
    try:
        fields = checkpoint(hook.workspace, a.run_dir, ref=ref, message=f"walkback checkpoint: lsn < {lsn}")
    except Exception as e:
        raise HookError(f"checkpoint failed: {str(e).splitlines()[0][:200] if str(e) else e!r}") from None
    if fields is None:  # outside git: the manifest of the tree
        fields = snapshot(hook.workspace, a.run_dir, a.blobs)
    return a.append("checkpoint", covers_lsn=lsn, trigger=hook.text, **fields)


# -- the calls/ cache: which intents a post hook closes ---------------------------------------


def _key(call: Call | None, call_id: str) -> str:
    """A call's file name: its id, or for an agent without ids the digest of its input (the post
    hook knows the input, not the order the pre hook saw)."""
    if call is not None and not call.id:
        return "input." + call_id.partition(":")[2]
    return safe_id(call_id)


def _remember(folder: Path, call: Call | None, call_id: str, opened: list[list[Any]]) -> None:
    """Queue ``(call id, intents)`` under the call's key (written under the journal's lock)."""
    path = folder / CALLS / (_key(call, call_id) + ".json")
    try:
        queue = json.loads(path.read_bytes()) if path.exists() else []
    except (OSError, ValueError):
        queue = []
    queue.append([call_id, opened])
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(queue))
    except OSError:
        pass  # a cache: the post hook searches the journal instead


def _take(folder: Path, key: str) -> list[list[Any]] | None:
    found = _pop(folder / CALLS / (key + ".json"))
    return found[1] if found else None


def _pop(path: Path) -> tuple[str, list[list[Any]]] | None:
    try:
        queue = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not queue:
        return None
    first, rest = queue[0], queue[1:]
    try:
        if rest:
            path.write_text(json.dumps(rest))
        else:
            path.unlink()
    except OSError:
        pass
    return str(first[0]), first[1]


def _recall(a: Appender, call: Call) -> tuple[str, list[list[Any]]] | None:
    """The call id and open intents ``[lsn, absolute target or None, expected post]`` of ``call``."""
    key = _key(call, synthesized_id(0, call.args)) if not call.id else safe_id(call.id)
    found = _pop(a.run_dir / CALLS / (key + ".json"))
    if found is not None:
        return found
    return _search(a, call.id or None, key.partition(".")[2] if not call.id else None)


def _search(a: Appender, call_id: str | None, digest: str | None) -> tuple[str, list[list[Any]]] | None:
    """The open intents of a call, read from the journal (when the calls/ cache lost them)."""
    needle = call_id if call_id else ":" + (digest or "")
    opened: dict[int, dict[str, Any]] = {}
    workspace = ""
    try:
        with open(a.path, "rb") as f:
            for n, line in enumerate(f):
                if n == 0:
                    workspace = str(json.loads(line).get("workspace") or "")
                elif needle.encode() in line:
                    rec = json.loads(line)
                    if rec.get("type") == "intent" and str(rec.get("call", "")).endswith(needle):
                        opened[rec["lsn"]] = rec
                    elif rec.get("ref") in opened:
                        del opened[rec["ref"]]
    except (OSError, ValueError):
        return None
    if not opened:
        return None
    first = str(next(iter(opened.values()))["call"])
    rows = [
        [lsn, os.path.join(workspace, str(r.get("target"))) if r.get("effect") == FS else None, r.get("post")]
        for lsn, r in opened.items()
        if r["call"] == first
    ]
    return first, rows
