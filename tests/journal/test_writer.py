"""JournalWriter: lsn and chain, the fsync policy, group commit, failure handling, dialects."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import orjson
import pytest
from journal_helpers import RecordingOps, eio
from walkback.journal import (
    JournalDamaged,
    JournalError,
    JournalWriteFailed,
    JournalWriter,
    read_records,
    scan,
)
from walkback.journal.record import H_MARK, SYNC_TYPES, ZERO_HASH
from walkback.journal.testing import write_run


def test_lsn_increments_by_one_and_every_record_chains_to_the_previous(run_dir: Path) -> None:
    records, res = read_records(run_dir)
    assert res.intact
    assert [r.lsn for r in records] == list(range(len(records)))
    prev = ZERO_HASH
    raw = (run_dir / "journal.jsonl").read_bytes().splitlines()
    for rec, line in zip(records, raw, strict=True):
        body = line[: line.rfind(H_MARK)]
        assert rec.data["prev"] == prev
        assert rec.data["h"] == hashlib.sha256(body).hexdigest()
        assert line.endswith(b'"}')
        prev = rec.data["h"]


def test_envelope_fields_come_first_in_spec_order(run_dir: Path) -> None:
    records, _ = read_records(run_dir)
    for rec in records:
        keys = list(rec.data)
        assert keys[:6] == ["v", "lsn", "ts", "run", "agent", "type"]
        assert keys[-2:] == ["prev", "h"]
    header = records[0].data
    assert header["type"] == "run.start" and len(header["journal_id"]) == 32
    assert header["producer"]["name"] == "walkback"


def _synced_bytes(ops: RecordingOps, journal: Path) -> tuple[int, int]:
    """(bytes written to the journal, bytes written before its last fdatasync)."""
    written = synced = 0
    for op, path, detail in ops.log:
        if path != str(journal):
            continue
        if op == "write":
            assert isinstance(detail, bytes)
            written += len(detail)
        elif op == "fdatasync":
            synced = written
    return written, synced


@pytest.mark.parametrize("typ", sorted(SYNC_TYPES - {"run.start"}))
def test_side_effect_records_are_fdatasynced_before_append_returns(
    tmp_path: Path, rec_ops: RecordingOps, typ: str
) -> None:
    w = JournalWriter.create(tmp_path / "r", task="t", ops=rec_ops, group_interval=3600)
    header_written, header_synced = _synced_bytes(rec_ops, w.path)
    assert header_written == header_synced > 0, "the header is durable when create returns"
    w.append("plan", steps=[])
    written, synced = _synced_bytes(rec_ops, w.path)
    assert synced == header_written < written, "a plan waits for group commit"
    w.append(typ, ref=1, sync=None)
    written, synced = _synced_bytes(rec_ops, w.path)
    assert synced == written, f"{typ} must be durable (and so is the plan before it) when append returns"
    w.close()


def test_group_commit_syncs_on_the_first_append_after_the_interval(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    w = JournalWriter.create(tmp_path / "r", task="t", ops=rec_ops, group_interval=0.05)
    n_sync = len(rec_ops.ops("fdatasync"))
    w.append("model.call", model="m")
    w.append("model.result", model="m")
    assert len(rec_ops.ops("fdatasync")) == n_sync, "inside the interval nothing is synced"
    time.sleep(0.06)
    w.append("model.call", model="m")
    written, synced = _synced_bytes(rec_ops, w.path)
    assert synced == written and len(rec_ops.ops("fdatasync")) == n_sync + 1, "one sync covers the group"
    w.close()


def test_sync_and_close_make_the_group_durable_and_close_syncs_only_if_dirty(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    w = JournalWriter.create(tmp_path / "r", task="t", ops=rec_ops, group_interval=3600)
    w.append("plan", steps=[1])
    w.sync()
    written, synced = _synced_bytes(rec_ops, w.path)
    assert written == synced
    n = len(rec_ops.ops("fdatasync"))
    w.sync()
    w.close()
    assert len(rec_ops.ops("fdatasync")) == n, "nothing dirty: no extra fsync"
    w.close()  # twice is fine
    assert w.closed


def test_explicit_sync_false_defers_even_an_intent(tmp_path: Path, rec_ops: RecordingOps) -> None:
    """Bulk import writes with sync=False and syncs once at close."""
    w = JournalWriter.create(tmp_path / "r", task="t", ops=rec_ops, group_interval=3600)
    w.append("intent", tool="t", sync=False)
    written, synced = _synced_bytes(rec_ops, w.path)
    assert synced < written
    w.close()
    written, synced = _synced_bytes(rec_ops, w.path)
    assert synced == written


def test_fsync_error_closes_the_writer_for_good_and_is_never_retried(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    w = JournalWriter.create(tmp_path / "r", task="t", ops=rec_ops)
    rec_ops.fail["fdatasync"] = eio()
    with pytest.raises(JournalWriteFailed, match="fsync failed.*will not be retried") as e:
        w.append("intent", tool="write_file")
    assert e.value.path == str(w.path)
    attempts = len(rec_ops.ops("fdatasync"))
    writes = len(rec_ops.ops("write"))
    assert w.closed
    assert rec_ops.log[-1][0] == "close", "the descriptor is closed at once"
    with pytest.raises(JournalWriteFailed, match="writer is closed"):
        w.append("plan", steps=[])
    w.sync()
    w.close()
    assert len(rec_ops.ops("fdatasync")) == attempts, "no fsync is ever attempted again"
    assert len(rec_ops.ops("write")) == writes, "nothing more is written"


def test_write_error_closes_the_writer_and_leaves_the_lsn_unused(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    w = JournalWriter.create(tmp_path / "r", task="t", ops=rec_ops)
    rec_ops.fail["write"] = OSError(28, "No space left on device")
    with pytest.raises(JournalWriteFailed, match="write failed.*No space left"):
        w.append("plan", steps=[])
    assert w.closed and w.next_lsn == 1
    with pytest.raises(JournalWriteFailed):
        w.append("plan", steps=[])
    assert scan(w.path).intact


def test_blobs_are_written_fsynced_and_renamed_before_the_intent_naming_them(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    w = write_run(tmp_path / "r", steps=3, ops=rec_ops)
    journal = str(w.path)
    intents = 0
    for pos, (op, path, data) in enumerate(rec_ops.log):
        if op != "write" or path != journal:
            continue
        assert isinstance(data, bytes)
        rec = orjson.loads(data)
        if rec["type"] != "intent":
            continue
        intents += 1
        for name in (rec["pre"], rec["post"]):
            blob = str(w.blobs.path(name))
            done = rec_ops.ops("replace", blob)
            assert done and done[0] < pos, f"blob {name} renamed into place before the intent"
            tmp = rec_ops.log[done[0]][2]  # the temp file renamed over it
            assert any(i < done[0] for i in rec_ops.ops("fsync", tmp)), "its data fsynced before the rename"
            assert any(done[0] < i < pos for i in rec_ops.ops("fsync_dir", str(Path(blob).parent)))
            assert w.blobs.get(name)
    assert intents == 3


def test_create_fsyncs_the_new_directories_and_the_journal_entry(
    tmp_path: Path, rec_ops: RecordingOps
) -> None:
    run_dir = tmp_path / "runs" / "r1"
    w = JournalWriter.create(run_dir, task="t", ops=rec_ops)
    opened = rec_ops.ops("open_append", w.path)[0]
    first_write = rec_ops.ops("write", w.path)[0]
    assert any(opened < i < first_write for i in rec_ops.ops("fsync_dir", run_dir)), "entry durable"
    assert rec_ops.ops("fsync_dir", tmp_path), "the new runs/ directory's entry is synced in its parent"
    assert rec_ops.ops("fsync_dir", tmp_path / "runs"), "and r1's in runs/"
    w.close()


def test_create_refuses_an_existing_journal(run_dir: Path) -> None:
    with pytest.raises(JournalError, match="already exists"):
        JournalWriter.create(run_dir, task="again")


def test_create_accepts_a_jsonl_path_and_header_fields(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path / "x" / "j.jsonl", task="t", run="r1", base_ref="abc") as w:
        assert w.path == tmp_path / "x" / "j.jsonl"
    records, _ = read_records(w.path)
    assert records[0].data["run"] == "r1" and records[0].data["base_ref"] == "abc"


@pytest.mark.parametrize("field", ["lsn", "v", "prev", "h", "run", "seq"])
def test_fields_the_writer_owns_are_refused(tmp_path: Path, field: str) -> None:
    with JournalWriter.create(tmp_path / "r", task="t") as w:
        with pytest.raises(JournalError, match="set by the writer"):
            w.append("plan", **{field: 1})
        assert not w.closed
    assert scan(w.path).intact


def test_open_continues_the_lsn_and_the_chain(run_dir: Path) -> None:
    before = scan(run_dir)
    with JournalWriter.open(run_dir) as w:
        assert w.next_lsn == before.last_lsn + 1 and w.last_h == before.last_h
        assert w.append("plan", steps=["more"]) == before.last_lsn + 1
    after = scan(run_dir)
    assert after.intact and after.records == before.records + 1


def test_open_refuses_a_damaged_journal(journal_file: Path) -> None:
    with open(journal_file, "ab") as f:
        f.write(b'{"v":1,"lsn":99')
    with pytest.raises(JournalDamaged, match="check --repair"):
        JournalWriter.open(journal_file)


def test_seq_dialect_appends_intents_with_the_next_seq_and_results_with_the_intents_seq(
    tmp_path: Path,
) -> None:
    path = tmp_path / "seq.jsonl"
    path.write_bytes(
        b'{"seq":0,"task_id":"T","tool":"write_file","args":{"path":"a"},"idempotency_key":"T:0"}\n'
        b'{"seq":0,"result":{"ok":true},"status":"ok"}\n'
        b'{"seq":1,"task_id":"T","tool":"write_file","args":{"path":"b"},"idempotency_key":"T:1"}\n'
    )
    with JournalWriter.open(path) as w:
        assert w.dialect == "seq" and w.run == "T"
        assert w.append("commit", ref=1, post="absent") == 1
        assert w.append("intent", tool="write_file", args={"path": "c"}) == 2
        assert w.append("fail", ref=2, error="boom") == 2
    records, res = read_records(path)
    assert res.intact and res.dialect == "seq"
    assert records[3].data == {"seq": 1, "status": "ok", "post": "absent"}
    assert records[5].data == {"seq": 2, "status": "failed", "error": "boom"}


def test_lsn_dialect_appends_in_its_own_shape(tmp_path: Path) -> None:
    path = tmp_path / "lsn.jsonl"
    path.write_bytes(b'{"lsn":1,"type":"plan"}\n{"lsn":2,"type":"intent","tool":"t","file":"a"}\n')
    with JournalWriter.open(path) as w:
        assert w.append("commit", ref=2) == 2  # the seed's shape: the commit carries the intent's lsn
        assert w.append("recovery", ref=2, finding="applied") == 3
    records, res = read_records(path)
    assert res.intact and records[2].data == {"lsn": 2, "type": "commit"}
    assert records[3].data == {"lsn": 3, "type": "recovery", "ref": 2, "finding": "applied"}
    assert [r.closes for r in records] == [None, None, 2, None]
