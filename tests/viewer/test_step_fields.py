"""The step detail's field list: what a detail sets, as dotted keys, without what says nothing."""

from __future__ import annotations

from walkback.timeline.details import FileEdit, ToolCall, ToolResult
from walkback.viewer.components.step_detail import field_pairs

POST = "sha256:" + "ab" * 32


def test_a_commits_change_shows_its_hash_not_an_empty_path() -> None:
    pairs = dict(field_pairs(ToolResult(ok=True, output="3 passed", edit=FileEdit(path="", post=POST))))
    assert pairs["edit.post"] == POST
    assert pairs["output"] == "3 passed"
    assert "edit.path" not in pairs


def test_empty_values_are_left_out_and_the_rest_kept_as_text() -> None:
    args = {"path": "a.py", "content": "x = 1\n", "flags": [], "note": ""}
    call = ToolCall(name="write_file", arguments=args)
    pairs = dict(field_pairs(call))
    assert pairs == {"arguments.path": "a.py", "arguments.content": "x = 1\n"}
