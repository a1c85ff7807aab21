"""docs/journal-format.md (the normative spec) says what the code does."""

from __future__ import annotations

import re
from pathlib import Path

from walkback.journal import read_records, repair
from walkback.journal.record import SYNC_TYPES
from walkback.journal.testing import write_run

SPEC = (Path(__file__).resolve().parents[2] / "docs" / "journal-format.md").read_text()


def _section(title: str) -> str:
    m = re.search(rf"^## \d+\. {title}\n(.*?)(?=^## )", SPEC, re.S | re.M)
    assert m, title
    return m.group(1)


def test_the_synced_types_are_the_ones_the_spec_lists() -> None:
    first = _section("Durability").split("\n* ")[1]
    listed = set(re.findall(r"`([a-z.]+)`", first.split(":", 1)[1]))
    assert listed == SYNC_TYPES


def test_journal_recovered_has_the_fields_the_spec_lists(tmp_path: Path) -> None:
    row = next(
        line for line in _section("Record types").splitlines() if line.startswith("| `journal.recovered`")
    )
    fields = set(re.findall(r"`([a-z0-9_]+)`", row.split("|")[2]))
    write_run(tmp_path / "run", steps=1, end=None)
    with open(tmp_path / "run" / "journal.jsonl", "ab") as f:
        f.write(b"{partial")
    report = repair(tmp_path / "run")
    records, _ = read_records(tmp_path / "run")
    data = records[-1].data
    assert data["type"] == "journal.recovered" and data["lsn"] == report.recovered_lsn
    own = set(data) - {"v", "lsn", "ts", "run", "agent", "type", "prev", "h"}
    assert own == fields


def test_the_envelope_order_is_the_spec_table_order(tmp_path: Path) -> None:
    rows = re.findall(r"^\| `([a-z]+)` \| (?:int|string) \|", _section("Lines and the envelope"), re.M)
    w = write_run(tmp_path / "run", steps=1)
    line = w.path.read_bytes().splitlines()[2]
    keys = re.findall(rb'"([a-z_]+)":', line)
    head = [k.decode() for k in keys[:6]]
    assert head == [r for r in rows if r not in ("ref", "prev", "h")]
    assert [k.decode() for k in keys[-2:]] == ["prev", "h"]


def test_the_inline_image_threshold_is_the_one_the_spec_states() -> None:
    from walkback.journal.images import INLINE_MAX

    pattern = r"at most \*\*(\d+) bytes\*\* \(`journal\.images\.INLINE_MAX`\)"
    stated = re.search(pattern, _section("Record types"))
    assert stated and int(stated.group(1)) == INLINE_MAX
