"""A journal read in two parts at once (importers/walkback_journal/_split.py) is the session a single
read gives: events, facts, string pool and the state a live follow resumes from, wherever the cut
falls, with or without damage before or after it."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from walkback.importers.walkback_journal import _split
from walkback.journal.testing import synth_journal
from walkback.timeline.session import Session

from walkback import importers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "viewer"))
from sample_runs import build_run, grow  # noqa: E402
from test_incremental_chunks import facts, rows  # noqa: E402


@dataclass
class Spy:
    """How each split read of a file ended: ``joined`` (the child's part taken) or ``read on``."""

    reads: list[tuple[Path, str]] = field(default_factory=list)
    handed: list[object] = field(default_factory=list)
    """The part each read was handed (the first of the chain of parts the child read)."""

    def of(self, journal: Path) -> list[str]:
        return [how for path, how in self.reads if path == journal]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    seen = Spy()
    join = _split.Part.join

    def joined(self: _split.Part, *a: Any) -> Any:
        if seen.handed and self is seen.handed[-1]:
            seen.reads[-1] = (seen.reads[-1][0], "joined")
        return join(self, *a)

    def asking(result: Any) -> Any:
        def asked(self: _split.Tail) -> _split.Part | None:
            seen.reads.append((self.path, "read on"))
            seen.handed.append(result(self))
            return seen.handed[-1]  # type: ignore[no-any-return]

        return asked

    monkeypatch.setattr(_split.Part, "join", joined)
    for cls in (_split.Tail, InProcess):
        monkeypatch.setattr(cls, "result", asking(cls.result))
    monkeypatch.setattr(_split, "MIN_BYTES", 0)
    return seen


class InProcess(_split.Tail):
    """The child's work done in this process (pickled both ways as the child's is), so a sweep over
    every cut does not start a process per cut; :func:`test_a_real_child_process_reads_the_tail`
    covers the real one. The parent takes the first :attr:`parent_takes` chunks (it got to them
    first), the child the rest."""

    parent_takes = 0

    def __init__(self, jpath: Path, size: int, job: dict[str, Any]) -> None:
        self.path, self.bounds, self.taken, self.child = jpath, _split.bounds(size), 0, None
        self.job = job

    def claim(self) -> bool:
        if self.taken == min(self.parent_takes, len(self.bounds) - 1):
            return False
        self.taken += 1
        return True

    def result(self) -> _split.Part | None:
        j = self.job
        left = iter(range(len(self.bounds) - 1 - self.taken))
        part = _split.read_tail(
            Path(j["path"]),
            self.bounds,
            lambda: next(left, None) is not None,
            first_index=j["first_index"],
            src=j["src"],
            parent=j["parent"],
        )
        return pickle.loads(pickle.dumps(part)) if part is not None else None


def follow_state(s: Session) -> list[tuple[object, ...]]:
    """What a live follow resumes from, per file, as plain values."""
    out = []
    for path, f in s.follow.items():
        st = f.state
        res = {k: v for k, v in vars(st.result).items() if k != "path"}
        chain = (st.chain.last_h, st.chain.expect, st.chain.after_gap, sorted(st.chain.bad_hashes))
        out.append(
            (path, f.src, f.agent_id, f.agent_aid, f.records, f.shown_damage, f.torn, f.waiting, f.ended)
            + (st.offset, st.line, st.anchor, repr(res), chain, refs_state(f.refs))
        )
    return out


def refs_state(refs: Any) -> tuple[object, ...]:
    """A file's lsn index as plain values (the index remapped by interleaving holds the one before)."""
    if hasattr(refs, "new_of"):
        return ("remapped", refs_state(refs.old), list(refs.new_of), refs.later)
    return (refs.first, refs.base, refs.next, refs.sparse, refs.sealed)


def same(a: Session, b: Session) -> None:
    assert rows(a) == rows(b)
    assert facts(a) == facts(b)
    assert a.table.pool.values == b.table.pool.values
    assert a.payloads == b.payloads
    assert follow_state(a) == follow_state(b)


def one_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    with monkeypatch.context() as m:
        m.setattr(_split, "MIN_BYTES", 1 << 62)
        return importers.load(path)


def line_starts(journal: Path) -> list[int]:
    data = journal.read_bytes()
    return [0] + [k + 1 for k, c in enumerate(data) if c == 10 and k + 1 < len(data)]


def cut_at(monkeypatch: pytest.MonkeyPatch, bounds: list[int], parent_takes: int) -> None:
    """Make the parent stop at the first of ``bounds`` and the chunks between them be taken as
    :class:`InProcess` says: the parent ``parent_takes`` from the front, the child the rest."""
    monkeypatch.setattr(_split, "bounds", lambda size: bounds)
    monkeypatch.setattr(InProcess, "parent_takes", parent_takes)


@pytest.mark.parametrize("shape", ["crashed", "recovered-torn", "completed"])
def test_every_cut_gives_the_session_one_read_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy, shape: str
) -> None:
    run = build_run(
        tmp_path, crashed=shape != "completed", recovered=shape == "recovered-torn", torn="torn" in shape
    )
    whole = one_read(run.dir, monkeypatch)
    monkeypatch.setattr(_split, "Tail", InProcess)
    starts = line_starts(run.journal)
    torn = 1 if "torn" in shape else 0
    for k, offset in enumerate(starts[1:], 1):
        # two chunks after the first cut, of one line and of two; a bound inside a line stands for
        # the start of the next; who takes them cycles
        later = [starts[j] + 5 * (j % 2) for j in (k + 1, k + 3) if j + j % 2 < len(starts) - torn]
        cut_at(monkeypatch, [offset, *later], parent_takes=k % 3)
        same(importers.load(run.dir), whole)
    # the parent never reaches the torn last line: it finishes the read alone
    assert spy.of(run.journal) == ["joined"] * (len(starts) - 1 - torn)
    # completions, approvals, spawns and recovery records fall on both sides of some cut
    assert whole.gated and whole.agents["helper"].outcome == "completed"
    assert not torn or (whole.recovered and whole.recovery_findings and whole.integrity.torn_tail)


@pytest.mark.parametrize("where", ["before", "at", "inside", "after"])
def test_damage_on_either_side_of_a_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy, where: str
) -> None:
    path = tmp_path / "run" / "journal.jsonl"
    path.parent.mkdir()
    synth_journal(path, 400)
    starts = line_starts(path)
    damaged = {"before": 100, "at": 200, "inside": 225, "after": 300}[where]
    data = bytearray(path.read_bytes())
    data[starts[damaged] + 20] ^= 0x01  # one bit: the line no longer matches its hash
    path.write_bytes(bytes(data))
    whole = one_read(path, monkeypatch)
    assert whole.integrity.chain == "broken" and whole.integrity.skipped
    monkeypatch.setattr(_split, "Tail", InProcess)
    for parent_takes in (0, 1, 2):
        cut_at(monkeypatch, [starts[150], starts[200], starts[250]], parent_takes)
        same(importers.load(path), whole)
    # the parent reads on itself when what it holds at the child's part is not what the child
    # assumed, whichever process read the damaged chunk
    assert spy.of(path) == ["joined" if where == "after" else "read on"] * 3


def test_a_chunk_the_child_cannot_start_is_read_by_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy
) -> None:
    """Two bounds inside one line: the child finds no record of its own in that chunk, stops taking
    chunks there and hands over what it read; the parent reads up to it and joins it."""
    run = build_run(tmp_path, crashed=True, recovered=True, torn=False)
    whole = one_read(run.dir, monkeypatch)
    monkeypatch.setattr(_split, "Tail", InProcess)
    starts = line_starts(run.journal)
    seen: list[int] = []
    read_part = _split.read_part

    def reading(jpath: Path, hint: int, **kw: Any) -> _split.Part | None:
        part = read_part(jpath, hint, **kw)
        seen.append(-1 if part is None else part.cut)
        return part

    monkeypatch.setattr(_split, "read_part", reading)
    cut_at(monkeypatch, [starts[10], starts[10] + 1, starts[10] + 2, starts[14]], parent_takes=0)
    same(importers.load(run.dir), whole)
    assert seen == [starts[14], starts[11], -1]  # the tail, the chunk from +2, none from +1
    assert spy.of(run.journal) == ["joined"]
    assert spy.handed[-1].cut == starts[11]  # type: ignore[attr-defined]


@pytest.mark.parametrize("parent", ["races", "takes none"])
def test_a_real_child_process_reads_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy, parent: str
) -> None:
    """The processes race for the chunks; or the parent stops at the first, so that the child
    reads every chunk, each linked in the child to the part after it."""
    run = build_run(tmp_path, crashed=True, recovered=True, torn=False)
    grow(run, 3000)
    whole = one_read(run.dir, monkeypatch)
    if parent == "takes none":
        monkeypatch.setattr(_split.Tail, "claim", lambda self: False)
    split = importers.load(run.dir)
    assert spy.of(run.journal) == ["joined"]
    same(split, whole)
    assert len(split) > 3000
    if parent == "takes none":
        first = _split.bounds(run.journal.stat().st_size)[0]
        assert first <= spy.handed[0].cut < first + 4096  # type: ignore[attr-defined]


def test_a_live_follow_goes_on_from_where_the_child_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy
) -> None:
    run = build_run(tmp_path, crashed=True, recovered=False, torn=False)
    grow(run, 50)
    single = one_read(run.dir, monkeypatch)
    monkeypatch.setattr(_split, "Tail", InProcess)
    split = importers.load(run.dir)
    assert spy.of(run.journal) == ["joined"]
    grow(run, 20)
    grown, grown_single = importers.extend(split), importers.extend(single)
    assert grown is not None and grown_single is not None
    same(grown, grown_single)
    fresh = one_read(run.dir, monkeypatch)
    assert rows(grown) == rows(fresh) and facts(grown) == facts(fresh)


GARBLED = "import json, os, sys; os.write(json.loads(sys.stdin.readline())['out'], b'\\x80garbled')"


@pytest.mark.parametrize("child", ["import sys; sys.exit(3)", GARBLED], ids=["fails", "writes garbage"])
def test_a_child_that_fails_costs_time_not_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy, child: str
) -> None:
    run = build_run(tmp_path, crashed=True, recovered=True, torn=True)
    whole = one_read(run.dir, monkeypatch)
    monkeypatch.setattr(_split, "CHILD", child)
    same(importers.load(run.dir), whole)
    assert spy.of(run.journal) == ["read on"]


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every child process started for a split read, in order."""
    started: list[Any] = []
    spawn = _split._spawn

    def counting() -> Any:
        started.append(spawn())
        return started[-1]

    monkeypatch.setattr(_split, "_spawn", counting)
    return started


@pytest.fixture
def prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: Spy, spawned: list[Any]
) -> tuple[Any, Session]:
    """A run with a subagent, long enough to split, its session read whole, and a child started
    ahead of a read of it."""
    run = build_run(tmp_path, crashed=True, recovered=True, torn=False)
    grow(run, 3000)
    whole = one_read(run.dir, monkeypatch)
    importers.prepare(run.dir)
    return run, whole


def test_a_child_started_ahead_is_the_one_that_reads_the_tail(
    prepared: tuple[Any, Session], spy: Spy, spawned: list[Any]
) -> None:
    run, whole = prepared
    importers.prepare(run.dir)  # asked twice: still one child
    assert len(spawned) == 1 and _split._ready == {run.journal: spawned[0]}
    assert spawned[0].waiting(), "it waits for its job"
    split = importers.load(run.dir)
    assert spy.of(run.journal) == ["joined"] and not _split._ready
    # it read the main journal's tail and exited; the subagent's journal got a child of its own
    assert spawned[0].proc.returncode == 0 and len(spawned) == len(split.sources) == 2
    assert all(child.out.closed for child in spawned)  # the parts' files are gone
    same(split, whole)


def test_a_child_started_ahead_that_died_is_replaced(
    prepared: tuple[Any, Session], spy: Spy, spawned: list[Any]
) -> None:
    run, whole = prepared
    spawned[0].proc.kill()
    spawned[0].proc.wait()
    split = importers.load(run.dir)
    assert spy.of(run.journal) == ["joined"] and len(spawned) == 1 + len(split.sources)
    assert spawned[0].out.closed
    same(split, whole)


def test_a_child_started_ahead_ends_with_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    monkeypatch.setattr(_split, "MIN_BYTES", 0)
    run = build_run(tmp_path, crashed=False, recovered=False, torn=False)
    importers.prepare(run.dir)
    child = spawned[0]
    child.proc.stdin.close()  # what it sees when this process is gone: it exits, having read nothing
    assert child.proc.wait(timeout=30) == 1 and os.fstat(child.out.fileno()).st_size == 0
    importers.prepare(run.dir)  # a new one for the dead one
    assert len(spawned) == 2 and _split._ready == {run.journal: spawned[1]} and child.out.closed
    _split._discard_ready()  # at exit
    assert spawned[1].proc.returncode is not None and spawned[1].out.closed and not _split._ready


def test_only_a_big_v1_journal_gets_a_child_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    run = build_run(tmp_path, crashed=False, recovered=False, torn=False)
    importers.prepare(run.dir)  # below MIN_BYTES
    monkeypatch.setattr(_split, "MIN_BYTES", 0)
    seed = tmp_path / "seed.jsonl"
    seed.write_text('{"lsn": 0, "type": "run.start", "task": "t"}\n')
    importers.prepare(seed)  # a seed dialect: read in one part
    importers.prepare(tmp_path / "nothing-here.jsonl")  # the read reports it
    assert spawned == [] and not _split._ready


def test_the_viewer_starts_the_child_for_the_session_it_reads_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    from walkback.viewer.app import make_store

    monkeypatch.setattr(_split, "MIN_BYTES", 0)
    run = build_run(tmp_path, crashed=False, recovered=False, torn=False)
    store = make_store([run.dir])
    first = next(iter(store.entries.values()))
    assert _split._ready == {run.journal: spawned[0]} and first.path == run.dir
    _split._discard_ready()


def test_each_chunk_is_taken_once() -> None:
    """The pipe of a child holds one byte per chunk: the child (here, a process reading from the
    same pipe) and this process take CHUNKS between them, and then both hear there are none left,
    even with a write end still open somewhere (a process forked meanwhile would hold one)."""
    child = _split._spawn()
    try:
        other = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import os; print(sum(os.read({child.claims}, 1) != b'' for _ in range(5)))",
            ],
            pass_fds=(child.claims,),
            capture_output=True,
            text=True,
            check=True,
        )
        assert other.stdout.strip() == "5"
        mine = 0
        while _split.claim(child.claims):
            mine += 1
        assert mine == _split.CHUNKS - 5 and not _split.claim(child.claims)
    finally:
        child.stop()
    claims, fill = os.pipe()
    os.set_blocking(claims, False)
    os.write(fill, b"\0")
    assert _split.claim(claims) and not _split.claim(claims)  # returns at once: not blocked
    os.close(claims)
    os.close(fill)
