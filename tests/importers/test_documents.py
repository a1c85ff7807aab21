"""importers.documents: an indented JSON document read a piece at a time gives exactly what parsing
it whole gives; damage stays inside the item it hits; a cut document keeps what was written; any
other layout is parsed whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from walkback.importers.documents import MISSING, Damaged, Document
from walkback.journal.errors import ImporterError
from walkback.timeline.sources import JsonItemSpans

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
DOCUMENTS = [
    *sorted((CORPUS / "openhands" / "v0-trajectories").glob("*.json")),
    *sorted((CORPUS / "swe-agent").rglob("*.traj*")),
    CORPUS / "copilot-cli" / "vibecodingtracker" / "copilot-legacy.json",
]
SAMPLE: dict[str, Any] = {
    "name": 'a "quoted" name\nwith a newline',
    "steps": [
        {"action": "ls", "nested": {"deep": [1, [2, 3], {}]}},
        "a string",
        7,
        [],
        {},
        None,
        ["x", ["y"]],
    ],
    "empty": [],
    "info": {"exit_status": "submitted", "list": [1, 2]},
    "odd/key~": [{"k": 1}],
}


def read_all(doc: Document, whole: Any) -> Any:
    """What the document reads as, through its own interface, shaped like ``whole``."""
    if isinstance(whole, list):
        return [v for _, v in doc.items(None, doc.source(None))]
    out = {}
    for key in doc.names():
        out[key] = [v for _, v in doc.items(key, doc.source(key))] if doc.is_array(key) else doc.get(key)
    return out


def write(tmp_path: Path, value: Any, *, indent: int | str | None = 2, newline: str = "\n") -> Path:
    path = tmp_path / "doc.json"
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    path.write_bytes(text.replace("\n", newline).encode())
    return path


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_corpus_document_streams_as_it_parses(path: Path) -> None:
    whole = orjson.loads(path.read_bytes())
    with Document(path) as doc:
        assert doc.streamed
        assert read_all(doc, whole) == whole


@pytest.mark.parametrize(("indent", "newline"), [(2, "\n"), (4, "\n"), (1, "\n"), (2, "\r\n")])
def test_any_indentation_and_line_end_streams(tmp_path: Path, indent: int, newline: str) -> None:
    with Document(write(tmp_path, SAMPLE, indent=indent, newline=newline)) as doc:
        assert doc.streamed and doc.indent == indent
        assert read_all(doc, SAMPLE) == SAMPLE
        assert doc.get("missing") is MISSING and doc.is_object() and not doc.is_array("info")


@pytest.mark.parametrize(
    ("indent", "value"), [(None, SAMPLE), ("\t", SAMPLE), (2, []), (2, {}), (None, [1, 2])]
)
def test_other_layouts_are_parsed_whole(tmp_path: Path, indent: int | str | None, value: Any) -> None:
    with Document(write(tmp_path, value, indent=indent)) as doc:
        assert not doc.streamed and read_all(doc, value) == value


def test_a_root_array_streams_with_its_items_reread_from_their_spans(tmp_path: Path) -> None:
    events = [{"id": k, "text": "x" * k} for k in range(50)]
    path = write(tmp_path, events)
    with Document(path) as doc:
        source = doc.source(None)
        assert isinstance(source, JsonItemSpans)
        assert [v for _, v in doc.items(None, source)] == events
    assert source.read(49, 0) == events[49] and source.read(0, 0) == events[0]
    assert source.where(7, 0) == f"{path}#/7"
    path.write_bytes(path.read_bytes().replace(b'"id"', b'"ID'))
    with pytest.raises(ImporterError, match="changed since it was read"):
        source.read(3, 0)


def test_a_value_is_reread_from_its_span(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    with Document(path) as doc:
        info, odd = doc.source("info"), doc.source("odd/key~")
        list(doc.items("odd/key~", odd))
    assert info.read(-1, 0) == SAMPLE["info"] and odd.read(0, 0) == {"k": 1}
    assert odd.where(0, 0) == f"{path}#/odd~1key~0/0"


def test_damage_stays_inside_the_item_it_hits(tmp_path: Path) -> None:
    path = write(tmp_path, {"steps": [{"a": 1}, {"b": 2}, {"c": 3}], "info": {"ok": True}})
    path.write_bytes(path.read_bytes().replace(b'"b": 2', b'"b": 2,,'))
    with Document(path) as doc:
        steps = [v for _, v in doc.items("steps", doc.source("steps"))]
        assert steps[0] == {"a": 1} and steps[2] == {"c": 3} and doc.get("info") == {"ok": True}
    hurt = steps[1]
    assert (
        isinstance(hurt, Damaged)
        and hurt.line == 6
        and hurt.reason.startswith("line 6: not JSON")
        and not hurt.torn
    )


@pytest.mark.parametrize("cut", [b'"c": 3', b'{\n      "c"', b"},\n    {"])
def test_a_cut_document_keeps_what_was_written(tmp_path: Path, cut: bytes) -> None:
    path = write(tmp_path, {"info": {"x": 1}, "steps": [{"a": 1}, {"b": 2}, {"c": 3}], "after": 1})
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(cut) + len(cut)])
    with Document(path) as doc:
        assert doc.streamed and doc.get("info") == {"x": 1} and doc.get("after") is MISSING
        steps = [v for _, v in doc.items("steps", doc.source("steps"))]
        whole = doc.get("steps")
    assert steps[:2] == [{"a": 1}, {"b": 2}] and isinstance(steps[-1], Damaged) and steps[-1].torn
    assert isinstance(whole, Damaged) and whole.torn


def test_a_document_that_is_not_json_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"steps": [1, 2')
    with pytest.raises(ImporterError, match="not a JSON document"):
        Document(path)
    with pytest.raises(ImporterError, match="cannot read"):
        Document(tmp_path / "missing.json")
