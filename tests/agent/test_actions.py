"""Planner output validation: only well-formed actions inside the workspace get through."""

from __future__ import annotations

from typing import Any

import pytest
from walkback.agent.actions import PlanError, parse_action

GOOD: list[dict[str, Any]] = [
    {"tool": "write_file", "args": {"path": "a/b.txt", "content": "x"}},
    {"tool": "replace_symbol", "args": {"path": "m.py", "old": "getUserById", "new": "fetchUser"}},
    {"tool": "ensure_line", "args": {"path": "CHANGELOG.md", "line": "- x"}},
    {"tool": "delete_file", "args": {"path": "old.txt"}},
    {"tool": "run_command", "args": {"cmd": ["python", "-V"]}, "idempotent": True, "test": True},
    {"tool": "external_call", "args": {"method": "post", "url": "http://127.0.0.1:1/x", "body": {"a": 1}}},
    {
        "tool": "spawn",
        "args": {
            "children": [
                {"agent": "a1", "task": "t", "steps": [{"tool": "delete_file", "args": {"path": "x"}}]}
            ]
        },
    },
]


@pytest.mark.parametrize("obj", GOOD, ids=lambda o: o["tool"])
def test_valid_actions_round_trip_through_their_plan_form(obj: dict[str, Any]) -> None:
    action = parse_action(obj)
    assert parse_action(action.to_json()) == action


def test_defaults_are_filled_in() -> None:
    assert parse_action(GOOD[4]).args["cwd"] == "."
    call = parse_action(GOOD[5])
    assert (
        call.args["method"] == "POST" and call.effect == "external" and call.target == "http://127.0.0.1:1/x"
    )


BAD: list[tuple[Any, str]] = [
    ("write the file please", "expected a JSON object"),
    ({"tool": "rm_rf", "args": {}}, "unknown tool 'rm_rf'"),
    ({"tool": "write_file", "args": {"path": "a"}}, "missing ['content']"),
    ({"tool": "write_file", "args": {"path": "a", "content": "x", "mode": 7}}, "unknown ['mode']"),
    ({"tool": "write_file", "args": {"path": "a", "content": 3}}, "wrong type"),
    ({"tool": "write_file", "args": {"path": "../escape", "content": "x"}}, "leaves the workspace"),
    ({"tool": "write_file", "args": {"path": "/etc/passwd", "content": "x"}}, "must be relative"),
    ({"tool": "delete_file", "args": {"path": ".git/HEAD"}}, "touches .git"),
    ({"tool": "delete_file", "args": {"path": "a//b"}}, "leaves the workspace"),
    ({"tool": "replace_symbol", "args": {"path": "m.py", "old": "a b", "new": "c"}}, "renames identifiers"),
    ({"tool": "ensure_line", "args": {"path": "m", "line": "two\nlines"}}, "one non-empty line"),
    ({"tool": "run_command", "args": {"cmd": "rm -rf /"}}, "wrong type"),
    ({"tool": "run_command", "args": {"cmd": []}}, "non-empty list"),
    ({"tool": "external_call", "args": {"method": "POST", "url": "file:///etc/passwd"}}, "http(s) URL"),
    ({"tool": "external_call", "args": {"method": "TRACE", "url": "http://x"}}, "method must be"),
    ({"tool": "write_file", "args": {"path": "a", "content": "x"}, "sudo": True}, "unknown key(s) ['sudo']"),
    ({"tool": "write_file", "args": {"path": "a", "content": "x"}, "check": 1}, "`check` must be str"),
    ({"tool": "spawn", "args": {"children": []}}, "at least one child"),
    ({"tool": "spawn", "args": {"children": [{"agent": "main", "task": "t", "steps": []}]}}, "not be 'main'"),
    ({"tool": "spawn", "args": {"children": [{"agent": "../x", "task": "t", "steps": []}]}}, "must match"),
    (
        {
            "tool": "spawn",
            "args": {"children": [{"agent": "a", "task": "t", "steps": [{"tool": "nope", "args": {}}]}]},
        },
        "child 0 (a) step 0: unknown tool",
    ),
]


@pytest.mark.parametrize("obj,why", BAD, ids=[w for _, w in BAD])
def test_invalid_output_is_refused_with_a_clear_reason(obj: Any, why: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_action(obj, "task.json: step 3")
    assert str(e.value).startswith("task.json: step 3")
    assert why in str(e.value)
