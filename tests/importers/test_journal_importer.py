"""The registry's detection, the reference-journal importer's robustness, and import to v1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from walkback.exporters.journal import write_journal
from walkback.importers import detect, load
from walkback.importers.walkback_journal import IMPORTER as wj
from walkback.journal import ImporterError, UnknownFormat, UnusableJournal, WalkbackError, read_records, scan
from walkback.journal.record import ZERO_HASH, encode, sha256_file
from walkback.journal.testing import write_run
from walkback.timeline.frame import frame
from walkback.timeline.query import file_rows
from walkback.timeline.views import approvals, file_change


@pytest.mark.parametrize(
    "head",
    [
        b'{"v":1,"lsn":0,"ts":"x","run":"r"}\n',
        b'\xef\xbb\xbf{"v":1,"lsn":0}\n',
        b'{"seq":0,"task_id":"T","tool":"x"}\n',
        b'{"lsn":3,"type":"plan"}\n',
    ],
)
def test_the_journal_importer_is_detected_by_content(tmp_path: Path, head: bytes) -> None:
    path = tmp_path / "anything.log"
    path.write_bytes(head)
    assert detect(path) is wj


def test_a_run_directory_or_journal_jsonl_is_detected_by_name(tmp_path: Path) -> None:
    write_run(tmp_path / "run", steps=1)
    assert detect(tmp_path / "run") is wj and detect(tmp_path / "run" / "journal.jsonl") is wj


@pytest.mark.parametrize(
    ("data", "why", "line"),
    [
        (bytes(range(256)) * 8, "binary data", 1),
        (b'[{"a":1}]', "a JSON array, not JSON lines", 1),
        (b"\n\n\xff\xfe\xfa\n", "not UTF-8 text (byte 0xff at byte 0)", 3),
        (b'{"zz_unrelated":' * 5000 + b"1" + b"}" * 5000 + b"\n", "not JSON (depth limit exceeded", 1),
        (b"hello\n", "not JSON", 1),
        (b'{"zz_unrelated":1}\n', "a JSON object of no known format", 1),
    ],
)
def test_unknown_input_is_named_by_its_first_line(tmp_path: Path, data: bytes, why: str, line: int) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    with pytest.raises(UnknownFormat, match="not a walkback journal or a known agent log") as e:
        detect(path)
    assert why in str(e.value) and e.value.line == line and e.value.exit_code == 2


def test_missing_empty_and_directory_inputs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UnusableJournal, match="no such file"):
        detect(tmp_path / "nope")
    (tmp_path / "empty").write_bytes(b"  \n")
    with pytest.raises(UnusableJournal, match="empty file"):
        detect(tmp_path / "empty")
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbf\n\n")  # was read as a Codex session, "running"
    with pytest.raises(UnusableJournal, match="empty file"):
        detect(tmp_path / "bom")
    with pytest.raises(ImporterError, match="no journal or known agent log in this directory"):
        detect(tmp_path)


def test_dot_and_the_root_are_refused_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``.`` and ``/`` have no name: an importer asking for the session file beside a folder
    (Claude Code's ``<id>.jsonl`` beside ``<id>/``) raised ValueError out of ``walkback show .``."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ImporterError, match="no journal or known agent log in this directory"):
        detect(".")
    with pytest.raises(ImporterError, match="no journal or known agent log in this directory"):
        detect("/")


SEQ = (
    b'{"seq":0,"task_id":"T1","tool":"write_file","args":{"path":"a.txt"},"idempotency_key":"T1:0"}\n'
    b'{"seq":0,"result":{"ok":true},"status":"ok"}\n'
    b'{"seq":1,"task_id":"T1","tool":"http_post","args":{"url":"https://x"},"idempotency_key":"T1:1","sync":7}\n'
)


def test_import_writes_a_hash_chained_v1_journal_naming_its_source(tmp_path: Path) -> None:
    src = tmp_path / "seq.jsonl"
    src.write_bytes(SEQ)
    out = write_journal(load(src), tmp_path / "out")
    records, res = read_records(out)
    assert res.intact and res.dialect == "v1" and res.chain == "ok"
    header = records[0].data
    assert header["source"] == {
        "format": "walkback-seed-seq",
        "files": [{"path": str(src.resolve()), "sha256": sha256_file(src)}],
        "status": "crashed",
    }
    assert header["task"] == "T1" and "tool" not in header, "a seed record is not a header"
    types = [(r.data["type"], r.data.get("ref"), r.data.get("source_lsn")) for r in records[1:]]
    assert types == [("intent", None, 0), ("commit", 1, 0), ("intent", None, 1)]
    assert records[3].data["source_sync"] == 7 and records[3].data["idempotency_key"] == "T1:1"
    again = load(out)
    assert [again.event(i).target for i in again.pending()] == ["https://x"]


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        ("completed", "completed"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
        ("crashed", "crashed"),
        ("unknown", "unknown"),
        ("running", "unknown"),
        ("???", "crashed"),
    ],
)
def test_an_import_reads_as_its_source_ended(tmp_path: Path, source: str, reads: str) -> None:
    """A completed Claude Code session imported read "crashed": a v1 journal without ``run.end``
    is one whose writer died. The header's ``source.status`` says how the source ended, and no
    record is made up for it (the import keeps the source's events, one for one); a status that is
    not one reads as a v1 journal without an end does."""
    src = tmp_path / "seq.jsonl"
    src.write_bytes(SEQ)
    session = load(src)
    session.status = source
    records, _ = read_records(write_journal(session, tmp_path / "out"))
    assert [r.data["type"] for r in records[1:]] == ["intent", "commit", "intent"]
    assert records[0].data["source"]["status"] == source
    assert load(tmp_path / "out").status == reads


def test_import_of_a_v1_run_keeps_every_record(tmp_path: Path) -> None:
    write_run(tmp_path / "run", steps=3)
    original, _ = read_records(tmp_path / "run")
    out = write_journal(load(tmp_path / "run"), tmp_path / "copy.jsonl")
    copied, res = read_records(out)
    assert res.intact and len(copied) == len(original)
    assert [r.data["type"] for r in copied] == [r.data["type"] for r in original]
    assert copied[0].data["source"]["format"] == "walkback"
    assert copied[0].data["workspace"] == "/ws", "the source header's own fields carry over"


# -- robustness: whatever a model writes into a validly chained journal, loading never crashes --

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(
        [
            "../../etc",
            "agents/a1",
            "sha256:" + "a" * 64,
            "absent",
            "\x00",
            "\u202e",
            "2026-01-01T00:00:00Z",
            "main",
            "tool_call",
            "agent_spawn",
            "message",
            "run_start",
        ]
    ),
)
json_value = st.recursive(
    json_leaf,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
    max_leaves=8,
)
FIELDS = [
    "ref", "intent", "tool", "target", "file", "path", "args", "pre", "post", "ts", "agent", "status",
    "decision", "approval", "child_dir", "child_agent", "outcome", "finding", "action", "brief", "recovered",
    "passed", "exit_code", "result", "kind", "agents",
]  # fmt: skip
TYPES = [
    "run.start", "intent", "commit", "fail", "approval.request", "approval.decision", "agent.spawn",
    "agent.end", "recovery", "journal.recovered", "run.end", "cancel", "test.result", "odd.type", 7, None,
]  # fmt: skip
record = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES)},
    optional={name: json_value for name in FIELDS},
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(record, min_size=1, max_size=12))
def test_loading_any_chained_records_never_raises_an_unexpected_error(
    tmp_path: Path, recs: list[dict[str, Any]]
) -> None:
    path = tmp_path / "fuzz.jsonl"
    prev = ZERO_HASH
    lines = []
    for lsn, fields in enumerate(recs):
        rec = {"v": 1, "lsn": lsn, **{k: v for k, v in fields.items() if k not in ("v", "lsn")}, "prev": prev}
        line, prev = encode(rec)
        lines.append(line)
    path.write_bytes(b"".join(lines))
    try:
        session = load(path)
    except WalkbackError:
        return
    assert scan(path).intact and len(session) == len(recs)
    for i in range(len(session)):
        session.event(i).time  # noqa: B018 - must not raise on any ts
        session.detail(i)
        file_change(session, i)
    approvals(session)
    session.pending()
    file_rows(session)
    frame(session)


@pytest.mark.parametrize("chunk", [7, 10_000])
def test_each_event_has_its_records_time_around_damaged_lines(tmp_path: Path, chunk: int) -> None:
    """Times are read for a chunk of records at once: around placeholder rows (which have none)
    and across chunks, every event still has the time of its own record."""
    import math

    import orjson
    from walkback.importers import load_chunks
    from walkback.journal.testing import synth_journal
    from walkback.timeline.clock import MinuteClock
    from walkback.timeline.kinds import PLACEHOLDER

    path = tmp_path / "run" / "journal.jsonl"
    path.parent.mkdir()
    synth_journal(path, 400)
    lines = path.read_bytes().splitlines(keepends=True)
    for k in (100, 101, 250):  # one bit each: the lines no longer match their hashes
        lines[k] = lines[k][:20] + bytes([lines[k][20] ^ 1]) + lines[k][21:]
    path.write_bytes(b"".join(lines))
    *_, s = load_chunks(path, chunk=chunk)
    t = s.table
    clock = MinuteClock()
    placeholders = [k for k in range(len(s)) if t.flags[k] & PLACEHOLDER]
    assert [t.line[k] for k in placeholders] == [101, 102, 251]
    assert all(math.isnan(t.ts[k]) for k in placeholders)
    timed = [k for k in range(len(s)) if k not in placeholders]
    assert len(timed) == 397
    assert [t.ts[k] for k in timed] == [clock(orjson.loads(lines[t.line[k] - 1])["ts"]) for k in timed]
    assert len(set(t.ts[k] for k in timed)) == 397  # each record its own second
