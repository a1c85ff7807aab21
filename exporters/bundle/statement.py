"""The in-toto Statement a bundle signs: its subjects (the carried files) and its predicate.

The predicate has two parts. What the bytes say (per source its line count and chain head, the
Merkle root and block roots, the redactions) is recomputed by ``verify`` from the carried bytes;
what the session says (:func:`facts`: events, agents, file changes, approvals, recovery
decisions, the integrity report) is re-derived by importing those bytes again with walkback's
own importers. Events are addressed as ``<artifact>:<line>`` (``#<item>`` for sources that are
not line-based), never by a path on the signer's machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from walkback.exporters.base import export_time
from walkback.timeline.session import Session
from walkback.timeline.views import approvals, file_calls, file_change

from .container import Carried

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://walkback.dev/bundle/v1"
FACTS = ("session", "events", "kinds", "agents", "integrity", "fileChanges", "approvals", "recoveries")
"""The predicate keys :func:`facts` derives from the session (compared one by one by verify)."""


def facts(session: Session, names: dict[Path, str]) -> dict[str, Iterator[bytes]]:
    """What the session says, addressed by artifact name (``names``: resolved source path -> name),
    as the JSON of each predicate key, in pieces: a million events' file changes are serialised as
    they are derived (some 100 MB of JSON), never held as a list of dicts (several times that), and
    ``verify`` hashes them without holding them at all."""
    src_name = [names.get(s.path.resolve(), str(s.path.name)) for s in session.sources]

    def at(i: int) -> str:
        t = session.table
        name = src_name[t.src[i]] if src_name else ""
        return f"{name}:{t.line[i]}" if t.line[i] else f"{name}#{t.offset[i]}"

    def where(file: str, line: Any) -> str:
        return f"{names.get(Path(file).resolve(), Path(file).name)}:{line}"

    integ = session.integrity
    t = session.table
    per_agent = np.bincount(np.frombuffer(t.agent, dtype=np.uint32)[: len(t)]) if len(t) else np.zeros(0)

    def changes() -> Iterator[dict[str, Any]]:
        for i in map(int, file_calls(session)):
            fc = file_change(session, i)
            if fc is not None:
                yield {
                    "at": at(i),
                    "agent": t.string(t.agent, i),
                    "path": fc.path,
                    "tool": fc.tool,
                    "operation": fc.edit.operation,
                    "pre": fc.pre,
                    "post": fc.post,
                    "result": at(fc.result) if fc.result is not None else None,
                }

    derived: dict[str, Any] = {
        "session": {
            "format": session.format,
            "task": session.task,
            "runs": session.runs,
            "status": session.status,
            "recovered": session.recovered,
        },
        "events": len(session),
        "kinds": session.kinds(),
        "agents": [
            {
                "id": a.id,
                "parent": a.parent,
                "run": a.run,
                "outcome": a.outcome,
                "events": int(per_agent[code])
                if (code := t.pool.find(a.id)) is not None and code < len(per_agent)
                else 0,
            }
            for a in session.agents.values()
        ],
        "integrity": {
            "chain": integ.chain,
            "tornTail": integ.torn_tail is not None,
            "firstBadLsn": integ.first_bad_lsn,
            "corrupt": [
                {
                    "at": where(c.get("file", ""), c.get("line")),
                    "lsn": c.get("lsn"),
                    "reason": c.get("reason"),
                }
                for c in integ.corrupt
            ],
            "skipped": [
                {"at": where(c.get("file", ""), c.get("line")), "reason": c.get("reason")}
                for c in integ.skipped
            ],
        },
        "fileChanges": changes(),
        "approvals": [
            {
                "at": at(a.request),
                "decision": a.decision,
                "approver": a.approver,
                "tool": a.tool,
                "target": a.target,
                "gated": at(a.gated) if a.gated is not None else None,
                "inferred": a.inferred,
            }
            for a in approvals(session)
        ],
        "recoveries": [
            {"lsn": f.lsn, "target": f.target, "tool": f.tool, "finding": f.finding, "action": f.action}
            for f in session.recovery_findings
        ],
    }
    return {
        k: json_list(v) if isinstance(v, Iterator) else iter([orjson.dumps(v)]) for k, v in derived.items()
    }


def json_list(items: Iterator[Any]) -> Iterator[bytes]:
    """``orjson.dumps(list(items))`` in pieces (joined, byte for byte the same), derived lazily.

    Items are joined a batch at a time: each small ``orjson.dumps`` result keeps the few KiB its
    buffer started with, so holding 333,000 of them would take over a GB.
    """
    yield b"["
    batch: list[bytes] = []
    first = True
    for item in items:
        batch.append(orjson.dumps(item))
        if len(batch) >= 4096:
            yield (b"" if first else b",") + b",".join(batch)
            first = False
            batch.clear()
    if batch:
        yield (b"" if first else b",") + b",".join(batch)
    yield b"]"


def statement(
    carried: list[Carried],
    *,
    facts: dict[str, bytes],
    entry: str,
    part: str | None,
    hooks: str | None,
    merkle: dict[str, Any],
    heads: list[str | None],
    redactions: list[dict[str, Any]],
    version: str,
) -> dict[str, Any]:
    """The Statement: one subject per carried file, and the predicate (``hooks``: the carried
    folder the hook journal of a hooked session is found in, docs/bundle.md)."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": c.name, "digest": {"sha256": c.sha256}} for c in carried],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "generator": {"name": "walkback", "version": version},
            "createdAt": export_time().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "entry": entry,
            "part": part,
            **({"hooks": hooks} if hooks is not None else {}),
            "sources": [
                {"name": c.name, "size": c.size, "lines": c.leaves.count, "head": h}
                for c, h in zip(carried, heads, strict=True)
            ],
            "merkle": merkle,
            "redactions": redactions,
            **{k: orjson.Fragment(v) for k, v in facts.items()},
        },
    }
