"""Realistic journals for tests and benchmarks, made by the real writer or the real encoder.

:func:`write_run` drives :class:`~journal.writer.JournalWriter` through a small agent run (plan,
model calls, file intents with their pre/post images in the blob store, commits, an approval),
so tests exercise the bytes a real run leaves. :func:`synth_journal` writes a large v1 journal of
the same record shapes straight through :func:`~journal.record.encode` (a million records in
seconds), for load and memory tests and the read benchmark.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from .fileops import OS, FileOps
from .record import ZERO_HASH, encode, sha256_bytes
from .writer import PRODUCER, JournalWriter


def write_run(
    run_dir: str | Path,
    *,
    steps: int = 5,
    end: str | None = "completed",
    pending: bool = False,
    ops: FileOps = OS,
    group_interval: float = 0.2,
) -> JournalWriter:
    """Write a run of ``steps`` committed file edits; return the (closed) writer.

    Step 1 is gated by an approval. ``pending`` adds a last intent without a commit (a crash
    between intent and effect); ``end`` is the ``run.end`` status, or None for no end record.
    """
    w = JournalWriter.create(
        run_dir, task="rename getUserById", workspace="/ws", base_ref="0" * 40, planner="scripted",
        ops=ops, group_interval=group_interval,
    )
    w.append("plan", steps=[f"edit src/m{i}.py" for i in range(steps)])
    for step in range(steps):
        path = f"src/m{step % 3}.py"
        old, new = f"v{step}\n".encode(), f"v{step + 1}\n".encode()
        w.append("model.call", model="scripted", messages=[{"role": "user", "content": f"step {step}"}])
        w.append("model.result", model="scripted", output=f"write {path}",
                 usage={"input_tokens": 100 + step, "output_tokens": 20})
        approval = None
        if step == 1:
            approval = w.append("approval.request", tool="write_file", target=path, step=step,
                                action={"tool": "write_file", "args": {"path": path}}, reason="touches src")
            w.append("approval.decision", ref=approval, decision="approve", approver="alice", reason="ok")
        pre, post = w.blobs.put(old), w.blobs.put(new)
        extra: dict[str, Any] = {"approval": approval} if approval is not None else {}
        intent = w.append("intent", tool="write_file", args={"path": path, "content": new.decode()},
                          target=path, effect="fs", step=step, pre=pre, post=post, **extra)
        w.append("commit", ref=intent, post=post, verified={"post": True, "check": None})
    if pending:
        post = w.blobs.put(b"unfinished\n")
        w.append("intent", tool="write_file", args={"path": "src/late.py", "content": "unfinished\n"},
                 target="src/late.py", effect="fs", step=steps, pre="absent", post=post)
    if end is not None:
        w.append("run.end", status=end)
    w.close()
    return w


def synth_journal(path: str | Path, records: int, *, files: int = 200) -> int:
    """Write a valid v1 journal of ``records`` records to ``path``; return its size in bytes.

    The mix is an agent's: a third model results, a third file intents, a third commits, with
    pre/post hashes of real content. Written in large chunks, so a million records take seconds.
    """
    run = uuid.uuid4().hex[:12]
    prev = ZERO_HASH
    chunk: list[bytes] = []
    size = 0
    hashes = [sha256_bytes(f"content {i}\n".encode()) for i in range(files + 1)]
    with open(path, "wb") as f:
        for lsn in range(records):
            ts = f"2026-01-01T{lsn // 3600 % 24:02d}:{lsn // 60 % 60:02d}:{lsn % 60:02d}.000000Z"
            rec: dict[str, Any] = {"v": 1, "lsn": lsn, "ts": ts, "run": run, "agent": "main"}
            if lsn == 0:
                rec.update(type="run.start", journal_id=uuid.uuid4().hex, task="synthetic", producer=PRODUCER)
            elif lsn % 3 == 1:
                k = lsn % files
                target = f"src/pkg{k % 7}/module_{k}.py"
                args = {"path": target, "content": f"content {k + 1}\n"}
                rec.update(type="intent", tool="write_file", args=args, target=target, effect="fs",
                           step=lsn // 3, pre=hashes[k], post=hashes[k + 1])
            elif lsn % 3 == 2:
                rec.update(type="commit", ref=lsn - 1, post=hashes[(lsn - 1) % files + 1],
                           verified={"post": True, "check": None})
            else:
                rec.update(type="model.result", model="scripted", output="next: edit the module " * 3,
                           usage={"input_tokens": 1200 + lsn % 500, "output_tokens": 80})
            rec["prev"] = prev
            line, prev = encode(rec)
            chunk.append(line)
            if len(chunk) >= 20000:
                size += f.write(b"".join(chunk))
                chunk.clear()
        size += f.write(b"".join(chunk))
    return size
