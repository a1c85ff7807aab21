"""The torture oracle: what a crashed-and-resumed run must have in common with a clean one.

* the workspace, file by file and byte by byte (``.git`` aside; bytecode is never written);
* each journal's *semantic* content: the intents (step, tool, target, post), what closed them,
  approvals, spawns and ends, and the run's end — recovery and checkpoint records aside;
* each idempotency key acted on exactly once by the demo service, and only the keys of the
  committed external intents;
* every journal (parent and subagents) intact — ``journal.scan(path).intact``, which is what
  ``walkback check`` reports — with each intent closed at most once and every blob it names present;
* no acknowledged record lost: each ``(journal, lsn, h)`` the side channel saw an fsync return
  for is still in that journal with the same hash;
* nobody still holds a run lock.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from walkback.journal.blobs import BlobStore
from walkback.journal.errors import BlobError
from walkback.journal.reader import read_records
from walkback.journal.record import ABSENT
from walkback.journal.runlock import lock_is_held
from walkback.journal.writer import JOURNAL_NAME

Fingerprint = Counter[tuple[Any, ...]]


def tree(ws: Path) -> dict[str, bytes]:
    """Every file of a workspace outside ``.git``, by relative path."""
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(ws).parts
    }


def journals(run_dir: Path) -> dict[str, Path]:
    """The run's journal and its subagents', by agent id."""
    found = {"main": run_dir / JOURNAL_NAME}
    for j in sorted(run_dir.glob(f"agents/*/{JOURNAL_NAME}")):
        found[j.parent.name] = j
    return found


@dataclass(frozen=True)
class Observed:
    """What a finished case left behind."""

    ws: Path
    run_dir: Path
    acks: Path
    effects: dict[str | None, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Golden:
    """The same, from a clean run: what every crashed run must end as."""

    tree: dict[str, bytes]
    journals: dict[str, Fingerprint]
    effects: int
    seconds: float
    """Wall time of the clean run (the range random kills are drawn from)."""


def _target(rec: dict[str, Any]) -> str:
    """The target, with a URL's host and port dropped (each case has its own demo service)."""
    t = str(rec["target"])
    return urlsplit(t).path if t.startswith("http") else t


def fingerprint(records: list[dict[str, Any]]) -> Fingerprint:
    """The journal's meaning, without lsns, times, recovery and checkpoint records."""
    by_lsn = {r["lsn"]: r for r in records}
    out: Fingerprint = Counter()
    for r in records:
        t = r["type"]
        if t == "intent":
            out[(t, r["step"], r["tool"], _target(r), r["post"])] += 1
        elif t in ("commit", "fail"):
            i = by_lsn[r["ref"]]
            out[(t, i["step"], i["tool"], _target(i))] += 1
        elif t == "approval.request":
            out[(t, r["step"], r["tool"], _target(r))] += 1
        elif t == "approval.decision":
            out[(t, by_lsn[r["ref"]]["step"], r["decision"])] += 1
        elif t == "agent.spawn":
            out[(t, r["step"], r["child_agent"])] += 1
        elif t == "agent.end":
            out[(t, r["child_agent"], r["outcome"])] += 1
        elif t == "run.end":
            out[(t, r["status"])] += 1
    return out


def _records(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    recs, result = read_records(path)
    if not result.intact:
        problems.append(f"{path} does not check intact: {result.damage_summary()}")
    return [r.data for r in recs]


def golden_of(obs: Observed, seconds: float) -> Golden:
    problems: list[str] = []
    prints = {agent: fingerprint(_records(j, problems)) for agent, j in journals(obs.run_dir).items()}
    if problems:
        raise AssertionError("the clean run's journals are damaged: " + "; ".join(problems))
    return Golden(tree(obs.ws), prints, sum(obs.effects.values()), seconds)


def check(obs: Observed, golden: Golden) -> list[str]:
    """Every way ``obs`` differs from ``golden`` (empty: the crash was harmless)."""
    problems: list[str] = []
    got = tree(obs.ws)
    if got != golden.tree:
        diff = sorted(k for k in got.keys() | golden.tree.keys() if got.get(k) != golden.tree.get(k))
        problems.append(f"workspace differs from the clean run's in {diff[:8]}")
    found = journals(obs.run_dir)
    if found.keys() != golden.journals.keys():
        problems.append(f"journals {sorted(found)} != clean run's {sorted(golden.journals)}")
    keyed: set[str] = set()
    by_path: dict[str, dict[int, str]] = {}
    for agent, path in found.items():
        recs = _records(path, problems)
        by_path[str(path.resolve())] = {r["lsn"]: r["h"] for r in recs if "h" in r}
        fp = fingerprint(recs)
        if fp != golden.journals.get(agent):
            extra = fp - golden.journals.get(agent, Counter())
            missing = golden.journals.get(agent, Counter()) - fp
            problems.append(
                f"{agent}: journal means something else: extra {dict(extra)}, missing {dict(missing)}"
            )
        problems += _closed_once(agent, recs) + _blobs(path, recs)
        keyed |= {
            str(r["idempotency_key"])
            for r in recs
            if r["type"] == "intent" and r.get("idempotency_key") and _committed(recs, r["lsn"])
        }
        if lock_is_held(path.parent):
            problems.append(f"{agent}: its run lock is still held after the run ended")
    problems += _effects(obs.effects, keyed, golden.effects)
    problems += _acks(obs.acks, by_path)
    return problems


def _committed(recs: list[dict[str, Any]], lsn: int) -> bool:
    return any(r["type"] == "commit" and r.get("ref") == lsn for r in recs)


def _closed_once(agent: str, recs: list[dict[str, Any]]) -> list[str]:
    closed = Counter(r["ref"] for r in recs if r["type"] in ("commit", "fail"))
    twice = sorted(lsn for lsn, n in closed.items() if n > 1)
    return [f"{agent}: intents {twice} closed more than once"] if twice else []


def _blobs(path: Path, recs: list[dict[str, Any]]) -> list[str]:
    store = BlobStore(path.parent / "blobs")
    out = []
    for r in recs:
        if r["type"] != "intent" or r.get("effect") != "fs":
            continue
        for name in (r["pre"], r["post"]):
            if name == ABSENT:
                continue
            try:
                store.get(name)
            except BlobError as e:
                out.append(f"{path}: intent lsn {r['lsn']}: {e}")
    return out


def _effects(effects: dict[str | None, int], keyed: set[str], want: int) -> list[str]:
    out = [f"key {k!r} acted {n} times" for k, n in effects.items() if n != 1]
    if set(effects) != keyed:
        out.append(
            f"service acted on keys {sorted(map(str, effects))}, committed intents carry {sorted(keyed)}"
        )
    if sum(effects.values()) != want:
        out.append(f"service acted {sum(effects.values())} times, the clean run {want}")
    return out


def _acks(acks: Path, by_path: dict[str, dict[int, str]]) -> list[str]:
    """Each acknowledged (fsync returned) record is still there, with the same hash."""
    lines = acks.read_text().splitlines() if acks.exists() else []
    seen = {line.split("\t", 1)[0] for line in lines}
    out = [f"no fsync of {p} was observed (is the side channel loaded?)" for p in by_path if p not in seen]
    for line in lines:
        parts = line.split("\t")
        if len(parts) != 4:
            continue  # a line cut by the kill that stopped its writer
        path, lsn, h = parts[0], int(parts[1]), parts[2]
        have = by_path.get(path)
        if have is None:
            out.append(f"acknowledged journal {path} is gone")
        elif have.get(lsn) != h:
            out.append(f"acknowledged record lsn {lsn} of {path} was lost or changed")
    return out
