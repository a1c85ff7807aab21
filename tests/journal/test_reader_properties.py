"""Properties of the reader on a real journal (written by JournalWriter, with blobs).

* cut at every byte offset: never an unexpected error; exactly the records fully written before
  the cut are read, and the rest is a torn tail;
* any single-bit flip is detected; inside a record followed by others it is corruption at that
  record's line;
* a deleted (except the last), duplicated or swapped record is detected.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from walkback.journal import UnusableJournal, read_records, repair
from walkback.journal.testing import write_run


class Sample:
    """The pristine journal, its lines and their end offsets."""

    def __init__(self, root: Path) -> None:
        write_run(root / "run", steps=6)
        self.data = (root / "run" / "journal.jsonl").read_bytes()
        self.lines = self.data.splitlines(keepends=True)
        self.ends: list[int] = []
        pos = 0
        for line in self.lines:
            pos += len(line)
            self.ends.append(pos)
        self.records, _ = read_records(root / "run")
        self.work = root / "work.jsonl"

    def scan_bytes(self, data: bytes) -> tuple[list[dict[str, object]], object]:
        self.work.write_bytes(data)
        records, res = read_records(self.work)
        return [r.data for r in records], res


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return Sample(tmp_path_factory.mktemp("prop"))


def test_sample_is_a_realistic_journal(sample: Sample) -> None:
    types = {r.data["type"] for r in sample.records}
    assert 25 <= len(sample.records) <= 40
    assert {"run.start", "intent", "commit", "approval.request", "approval.decision", "run.end"} <= types
    assert all(r.data["pre"].startswith("sha256:") for r in sample.records if r.data["type"] == "intent")


def test_truncation_at_every_byte_offset_yields_exactly_the_complete_records(sample: Sample) -> None:
    header_end = sample.ends[0]
    for cut in range(len(sample.data) + 1):
        data = sample.data[:cut]
        if cut < header_end:
            with pytest.raises(UnusableJournal) as e:
                sample.scan_bytes(data)
            assert e.value.line == 1, cut
            continue
        records, res = sample.scan_bytes(data)
        complete = sum(1 for end in sample.ends if end <= cut)
        assert records == [r.data for r in sample.records[:complete]], cut
        assert res.records == complete and res.valid_end == sample.ends[complete - 1], cut
        assert not res.corrupt, cut
        if cut == res.valid_end:
            assert res.intact, cut
        else:
            assert res.torn_tail == {"offset": res.valid_end, "bytes": cut - res.valid_end}, cut


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_repair_of_any_cut_leaves_the_prefix_plus_journal_recovered(
    sample: Sample, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(sample.ends[0], len(sample.data)))
    sample.work.write_bytes(sample.data[:cut])
    complete = sum(1 for end in sample.ends if end <= cut)
    report = repair(sample.work)
    records, res = read_records(sample.work)
    assert res.intact
    assert [r.data for r in records[:complete]] == [r.data for r in sample.records[:complete]]
    torn = cut > sample.ends[complete - 1]
    assert len(records) == complete + torn
    assert (report.recovered_lsn is not None) == torn
    if report.broken_copy:
        report.broken_copy.unlink()


def _flip(data: bytes, bit: int) -> bytes:
    b = bytearray(data)
    b[bit // 8] ^= 1 << (bit % 8)
    return bytes(b)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_single_bit_flip_is_detected(sample: Sample, data: st.DataObject) -> None:
    bit = data.draw(st.integers(0, len(sample.data) * 8 - 1))
    _, res = sample.scan_bytes(_flip(sample.data, bit))
    assert not res.intact


def test_every_bit_flip_in_an_intent_record_is_corruption_at_its_line(sample: Sample) -> None:
    i = next(k for k, r in enumerate(sample.records) if r.data["type"] == "intent" and k > 5)
    start = sample.ends[i - 1]
    for bit in range(start * 8, sample.ends[i] * 8):
        records, res = sample.scan_bytes(_flip(sample.data, bit))
        assert res.corrupt and res.corrupt[0].line == i + 1, bit
        assert not res.torn, bit
        assert records[-1] == sample.records[-1].data, "the records after the damage are still read"


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_deleted_record_is_detected_unless_it_was_the_last(sample: Sample, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(sample.lines) - 1))
    records, res = sample.scan_bytes(b"".join(sample.lines[:i] + sample.lines[i + 1 :]))
    if i == len(sample.lines) - 1:
        # Indistinguishable from a journal that ended one record earlier: the prefix is all there is.
        assert res.intact and len(records) == i
    else:
        assert not res.intact
        assert res.first_bad_lsn == i + 1 or (i == 0 and res.first_bad_lsn in (0, 1))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_duplicated_record_is_detected(sample: Sample, data: st.DataObject) -> None:
    n = len(sample.lines)
    i = data.draw(st.integers(0, n - 1))
    j = data.draw(st.integers(i + 1, n))
    lines = [*sample.lines[:j], sample.lines[i], *sample.lines[j:]]
    _, res = sample.scan_bytes(b"".join(lines))
    assert not res.intact


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_swapped_records_are_detected(sample: Sample, data: st.DataObject) -> None:
    n = len(sample.lines)
    i = data.draw(st.integers(0, n - 2))
    j = data.draw(st.integers(i + 1, n - 1))
    lines = list(sample.lines)
    lines[i], lines[j] = lines[j], lines[i]
    _, res = sample.scan_bytes(b"".join(lines))
    assert not res.intact


def test_every_bit_flip_in_the_header_is_corruption_at_line_1_never_an_unusable_file(sample: Sample) -> None:
    for bit in range(sample.ends[0] * 8):
        records, res = sample.scan_bytes(_flip(sample.data, bit))
        assert res.corrupt and res.corrupt[0].line == 1 and not res.torn, bit
        assert records[-1] == sample.records[-1].data, bit
