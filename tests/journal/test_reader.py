"""The reader: offsets and line numbers, BOM and CRLF, versions, damage classes, input it refuses."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from journal_helpers import lines_of
from walkback.journal import Scanner, UnusableJournal, read_at, read_records, scan
from walkback.journal import reader as reader_mod
from walkback.journal.record import encode
from walkback.journal.testing import write_run


def test_records_carry_their_byte_offset_length_and_line_number(journal_file: Path) -> None:
    data = journal_file.read_bytes()
    records, res = read_records(journal_file)
    assert [r.line for r in records] == list(range(1, len(records) + 1))
    for r in records:
        line = data[r.offset : r.offset + r.length]
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert read_at(journal_file, r.offset, r.length) == r.data
    assert res.valid_end == res.file_size == len(data)
    assert res.header is not None and res.header["type"] == "run.start"


@pytest.mark.parametrize("block", [7, 100, 4096])
def test_block_boundaries_do_not_change_what_is_read(
    journal_file: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    expected, _ = read_records(journal_file)
    monkeypatch.setattr(reader_mod, "BLOCK", block)
    got, res = read_records(journal_file)
    assert res.intact
    assert [(r.lsn, r.offset, r.line, r.length, r.data) for r in got] == [
        (r.lsn, r.offset, r.line, r.length, r.data) for r in expected
    ]


def test_a_leading_bom_is_skipped_and_offsets_stay_true(journal_file: Path) -> None:
    plain, _ = read_records(journal_file)
    journal_file.write_bytes(b"\xef\xbb\xbf" + journal_file.read_bytes())
    records, res = read_records(journal_file)
    assert res.intact and len(records) == len(plain)
    assert [r.offset for r in records] == [r.offset + 3 for r in plain]
    assert read_at(journal_file, records[2].offset, records[2].length) == plain[2].data


def test_crlf_line_ends_are_read_and_counted_in_the_length(journal_file: Path) -> None:
    plain, _ = read_records(journal_file)
    journal_file.write_bytes(journal_file.read_bytes().replace(b"\n", b"\r\n"))
    records, res = read_records(journal_file)
    assert res.intact and [r.data for r in records] == [r.data for r in plain]
    assert all(r.length == p.length + 1 for r, p in zip(records, plain, strict=True))
    assert res.valid_end == res.file_size
    assert [r.offset for r in records[1:]] == [r.offset + r.length for r in records[:-1]]


def test_a_torn_crlf_tail_ends_after_the_last_complete_crlf(journal_file: Path) -> None:
    crlf = journal_file.read_bytes().replace(b"\n", b"\r\n")
    journal_file.write_bytes(crlf + b'{"v":1,"lsn":')
    res = scan(journal_file)
    assert res.torn_tail == {"offset": len(crlf), "bytes": 13}


def _v(version: int, lsn: int = 0, prev: str = "0" * 64) -> bytes:
    rec = {"v": version, "lsn": lsn, "ts": "", "run": "r", "agent": "main", "type": "run.start", "prev": prev}
    return encode(rec)[0]


def test_an_unknown_major_version_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(_v(2) + _v(2, 1))
    with pytest.raises(UnusableJournal, match=r"format version 2 is not supported.*upgrade walkback") as e:
        scan(path)
    assert e.value.line == 1 and str(e.value).startswith(f"{path}:1: ")


def test_a_newer_version_record_appended_to_a_v1_journal_is_refused_at_its_line(journal_file: Path) -> None:
    last_h = scan(journal_file).last_h
    n = len(lines_of(journal_file))
    with open(journal_file, "ab") as f:
        f.write(_v(3, n, last_h or ""))
    with pytest.raises(UnusableJournal, match="format version 3") as e:
        scan(journal_file)
    assert e.value.line == n + 1


LSN_DIALECT = (
    b'{"lsn":23,"type":"plan","steps":["rename"]}\n'
    b'{"lsn":24,"type":"intent","tool":"replace_symbol","file":"src/api/users.ts","old":"getUserById",'
    b'"new":"fetchUser","pre":"sha256:aa","post":"sha256:bb"}\n'
    b'{"lsn":25,"type":"commit","intent":24}\n'
    b'{"lsn":26,"type":"intent","tool":"write_file","path":"b.ts"}\n'
    b'{"lsn":27,"type":"commit","ref":26}\n'
    b'{"lsn":28,"type":"checkpoint","git":"abc"}\n'
)
SEQ_DIALECT = (
    b'{"seq":0,"task_id":"T1","tool":"write_file","args":{"path":"a.txt"},"idempotency_key":"T1:0"}\n'
    b'{"seq":0,"result":{"ok":true},"status":"ok"}\n'
    b'{"seq":1,"task_id":"T1","tool":"http_post","args":{"url":"https://x"},"idempotency_key":"T1:1"}\n'
    b'{"seq":2,"task_id":"T1","tool":"write_file","args":{"path":"b.txt"},"idempotency_key":"T1:2"}\n'
    b'{"seq":2,"result":null,"status":"error"}\n'
)


@pytest.mark.parametrize(("data", "dialect", "last"), [(LSN_DIALECT, "lsn", 28), (SEQ_DIALECT, "seq", 2)])
def test_seed_dialects_read_without_a_chain(tmp_path: Path, data: bytes, dialect: str, last: int) -> None:
    path = tmp_path / "seed.jsonl"
    path.write_bytes(data)
    records, res = read_records(path)
    assert res.intact and res.dialect == dialect and res.chain == "absent"
    assert len(records) == data.count(b"\n") and res.last_lsn == last


def _seed_damage(
    tmp_path: Path, data: bytes
) -> tuple[list[int], list[tuple[int, str]], list[tuple[int, str]]]:
    path = tmp_path / "seed.jsonl"
    path.write_bytes(data)
    records, res = read_records(path)
    return (
        [r.line for r in records],
        [(d.line, d.reason) for d in res.corrupt],
        [(d.line, d.reason) for d in res.torn],
    )


def test_lsn_dialect_duplicate_lsn_is_corruption(tmp_path: Path) -> None:
    lines = LSN_DIALECT.splitlines(keepends=True)
    got, corrupt, torn = _seed_damage(tmp_path, b"".join([*lines[:2], lines[1], *lines[2:]]))
    assert corrupt == [(3, "duplicate lsn 24 (after lsn 24)")] and not torn
    assert got == [1, 2, 3, 4, 5, 6, 7], "the duplicate is still shown beside the gap"


def test_lsn_dialect_an_intent_closed_twice_is_corruption(tmp_path: Path) -> None:
    lines = LSN_DIALECT.splitlines(keepends=True)
    got, corrupt, torn = _seed_damage(tmp_path, b"".join([*lines[:3], lines[2], *lines[3:]]))
    assert corrupt == [(4, "lsn 24 closed twice")] and not torn
    assert got == [1, 2, 3, 4, 5, 6, 7]


def test_lsn_dialect_missing_lsn_mid_file_is_corruption_not_a_torn_tail(tmp_path: Path) -> None:
    lines = LSN_DIALECT.splitlines(keepends=True)
    got, corrupt, torn = _seed_damage(tmp_path, b"".join([*lines[:2], *lines[3:]]))
    assert corrupt == [(3, "lsn 26 where 25 was expected (lsn 25 missing)")] and not torn
    assert got == [1, 2, 3, 4, 5]


def test_lsn_dialect_a_trailing_record_that_does_not_follow_is_a_torn_tail(tmp_path: Path) -> None:
    lines = LSN_DIALECT.splitlines(keepends=True)
    got, corrupt, torn = _seed_damage(tmp_path, b"".join([*lines[:4], lines[5]]))
    assert not corrupt and torn == [(5, "lsn 28 where 27 was expected (lsn 27 missing)")]
    assert got == [1, 2, 3, 4]


def test_seq_dialect_result_before_its_intent_and_double_completion_are_damage(tmp_path: Path) -> None:
    lines = SEQ_DIALECT.splitlines(keepends=True)
    _, corrupt, _ = _seed_damage(tmp_path, b"".join([lines[0], b'{"seq":5,"status":"ok"}\n', *lines[1:]]))
    assert corrupt == [(2, "result for seq 5 before its intent")]
    _, corrupt, _ = _seed_damage(tmp_path, b"".join([*lines[:2], lines[1], *lines[2:]]))
    assert corrupt == [(3, "seq 0 completed twice")]
    _, corrupt, torn = _seed_damage(tmp_path, b"".join([*lines[:2], *lines[3:]]))
    assert corrupt == [(3, "seq 2 where 1 was expected (seq 1 missing)")] and not torn


def test_v1_corruption_mid_file_is_reported_with_lsn_and_line_and_later_records_still_read(
    journal_file: Path,
) -> None:
    lines = lines_of(journal_file)
    lines[5] = b"this is not json\n"
    journal_file.write_bytes(b"".join(lines))
    records, res = read_records(journal_file)
    assert not res.intact and not res.torn and res.chain == "broken"
    assert [(d.line, d.lsn) for d in res.corrupt] == [(6, 5), (7, 6)], "lsn 6 lost its predecessor"
    assert res.corrupt[0].reason.startswith("not JSON")
    assert res.corrupt[1].reason == "does not chain: prev is not the hash of lsn 4"
    assert [r.line for r in records] == [n for n in range(1, len(lines) + 1) if n != 6]
    assert all(r.after_gap for r in records[5:]) and not any(r.after_gap for r in records[:5])


def test_a_damaged_header_is_corruption_at_line_1_not_an_unusable_file(journal_file: Path) -> None:
    lines = lines_of(journal_file)
    lines[0] = lines[0].replace(b'"task":"', b'"task":"X', 1)
    journal_file.write_bytes(b"".join(lines))
    records, res = read_records(journal_file)
    assert [(d.line, d.reason) for d in res.corrupt] == [(1, "hash mismatch (record altered)")]
    assert res.header is None and records[0].lsn == 1


@pytest.mark.parametrize(
    "tail",
    [b'{"v":1,"lsn":40,"ts":"2026', b"\x00" * 300, b"\x00" * 100 + b"\n" + b"\x00" * 50, b"garbage\n"],
)
def test_a_torn_tail_is_classified_repairable(journal_file: Path, tail: bytes) -> None:
    size = journal_file.stat().st_size
    with open(journal_file, "ab") as f:
        f.write(tail)
    res = scan(journal_file)
    assert not res.corrupt and res.torn and res.chain == "ok"
    assert res.torn_tail == {"offset": size, "bytes": len(tail)}


def test_a_trailing_record_that_does_not_chain_is_a_torn_tail(journal_file: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_run(other, steps=1)
    size = journal_file.stat().st_size
    foreign = lines_of(other / "journal.jsonl")[3]
    with open(journal_file, "ab") as f:
        f.write(foreign)
    res = scan(journal_file)
    assert not res.corrupt and res.torn_tail == {"offset": size, "bytes": len(foreign)}
    assert res.torn[0].reason.startswith("does not chain")


def test_trailing_records_that_chain_to_each_other_but_not_to_the_journal_are_corruption(
    journal_file: Path, tmp_path: Path
) -> None:
    """§5: a readable record after the first bad line that links to a hash in the bad region means
    the journal continues past damage (e.g. two journals concatenated): never cut automatically."""
    other = tmp_path / "other"
    write_run(other, steps=1)
    n = len(lines_of(journal_file))
    with open(journal_file, "ab") as f:
        f.write(b"".join(lines_of(other / "journal.jsonl")[3:5]))
    records, res = read_records(journal_file)
    assert not res.torn and [d.line for d in res.corrupt] == [n + 1]
    assert records[-1].line == n + 2 and records[-1].after_gap


def test_blank_lines_are_ignored(journal_file: Path) -> None:
    lines = lines_of(journal_file)
    journal_file.write_bytes(b"\n".join(lines) + b"  \n")
    records, res = read_records(journal_file)
    assert res.intact and len(records) == len(lines)


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        (b"", "empty journal", 1),
        (b"\n \n", "empty journal", 1),
        (bytes(range(256)) * 4, "binary data", 1),
        (b"\x00" * 5000, "NUL bytes", 1),
        (b'[{"lsn":0,"type":"plan"}]\n', "a JSON array, not JSON lines", 1),
        (b"[\n" + b'  {"lsn":0,"type":"plan"}\n' + b"]\n", "a JSON array", 1),
        (b'{"lsn":0,"type":"plan","x":"\xff\xfe"}\n', "not UTF-8 text (byte 0xff at byte 28)", 1),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n", "depth limit exceeded", 1),
        (b'{"type":"user","message":"hi"}\n' * 3, "without `v`, `lsn`+`type` or `seq`", 1),
        (b"\n\nhello world\n", "not JSON", 3),
        (b'"just a string"\n', "a JSON str, not an object", 1),
        (b'{"lsn":0,"type":"plan"}', "no newline", 1),
    ],
)
def test_unusable_input_is_refused_naming_file_line_and_problem(
    tmp_path: Path, data: bytes, message: str, line: int
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    with pytest.raises(UnusableJournal, match=re.escape(message)) as e:
        scan(path)
    assert e.value.path == str(path) and e.value.line == line
    assert "\n" not in str(e.value) and len(str(e.value)) < 300 + len(str(path))


def test_a_missing_file_and_a_fifo_are_unusable(tmp_path: Path) -> None:
    with pytest.raises(UnusableJournal, match="no such file"):
        scan(tmp_path / "nope.jsonl")
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)  # a writer, so that opening for reading does not block
    try:
        with pytest.raises(UnusableJournal, match="not a regular file"):
            scan(fifo)
    finally:
        os.close(fd)


def test_a_6mb_record_straddling_read_blocks_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from walkback.journal import JournalWriter

    with JournalWriter.create(tmp_path / "r", task="t") as w:
        w.append("model.result", output="y" * (6 << 20))
        w.append("plan", steps=[])
    monkeypatch.setattr(reader_mod, "BLOCK", 1 << 20)
    records, res = read_records(w.path)
    assert res.intact and len(records[1].data["output"]) == 6 << 20 and records[2].line == 3


def test_a_run_directory_is_read_as_its_journal(run_dir: Path) -> None:
    assert Scanner(run_dir).path == run_dir / "journal.jsonl"
    assert scan(run_dir).intact


def test_each_record_says_which_record_it_closes(journal_file: Path) -> None:
    records, _ = read_records(journal_file)
    closes = {r.lsn: r.closes for r in records if r.closes is not None}
    by_type = {r.lsn: r.data["type"] for r in records}
    assert closes and all(by_type[lsn] in ("commit", "approval.decision") for lsn in closes)
    assert all(by_type[ref] in ("intent", "approval.request") for ref in closes.values())
    assert all(closes[lsn] == records[lsn].data["ref"] for lsn in closes)
    assert all(r.closes is None for r in records if r.data["type"] not in ("commit", "approval.decision"))


@pytest.mark.parametrize(
    "stray",
    [
        b'{"seq":0,"task_id":"T1","tool":"write_file","args":{"path":"a.txt"}}\n',
        b'{"lsn":0,"type":"plan"}\n',
        b'{"seq":0,"result":{"ok":true},"status":"ok"}\n{"lsn":3,"type":"commit"}\n',
    ],
)
def test_stray_seed_lines_in_front_of_a_v1_journal_are_corruption_and_repair_cuts_nothing(
    journal_file: Path, stray: bytes
) -> None:
    """The dialect is not decided from one line: the v1 records after them verify, so the lines in
    front are damage at line 1 (corruption: valid records follow), never a torn tail of everything."""
    from walkback.journal import JournalDamaged, repair

    clean = journal_file.read_bytes()
    n = len(clean.splitlines())
    journal_file.write_bytes(stray + clean)
    records, res = read_records(journal_file)
    bad = stray.count(b"\n")
    assert res.dialect == "v1" and not res.torn
    assert [d.line for d in res.corrupt] == list(range(1, bad + 1))
    assert [r.line for r in records] == list(range(bad + 1, bad + n + 1)) and res.records == n
    with pytest.raises(JournalDamaged, match="not repaired"):
        repair(journal_file)
    assert journal_file.read_bytes() == stray + clean


def test_a_v1_looking_stray_line_in_front_of_a_seed_journal_does_not_make_it_v1(tmp_path: Path) -> None:
    path = tmp_path / "seed.jsonl"
    path.write_bytes(b'{"v":1,"lsn":0,"type":"run.start","h":"00"}\n' + LSN_DIALECT)
    records, res = read_records(path)
    assert res.dialect == "lsn" and not res.torn and [d.line for d in res.corrupt] == [1]
    assert len(records) == LSN_DIALECT.count(b"\n")


def test_repair_never_cuts_hash_verified_records_from_a_seed_journal(
    tmp_path: Path, journal_file: Path
) -> None:
    """Beyond the lines the dialect is decided from, v1 records appended to a seed journal read as a
    torn tail of that dialect; their hashes verify, so a repair refuses to cut them."""
    from walkback.journal import JournalDamaged, repair

    path = tmp_path / "seed.jsonl"
    seed = b"".join(b'{"lsn":%d,"type":"plan"}\n' % i for i in range(100))
    path.write_bytes(seed + journal_file.read_bytes())
    res = scan(path)
    assert res.dialect == "lsn" and res.torn and res.records == 100
    with pytest.raises(JournalDamaged, match="hash"):
        repair(path)
    assert path.read_bytes() == seed + journal_file.read_bytes()


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "journal.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(UnusableJournal, match=r"not a regular file \(a FIFO"):
        scan(fifo)
    with pytest.raises(UnusableJournal, match="not a regular file"):
        scan(tmp_path)  # a run directory whose journal is a FIFO
