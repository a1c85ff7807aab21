"""Redaction rules: content left out of a bundle that still verifies.

A rule names what to hide: a field path (``args.content``, ``message.content.*.text``), a
regular expression (``re:sk-[A-Za-z0-9]{20,}``) or a whole agent (``agent:auth``). A matching
value becomes ``[redacted leaf <hex>]``, where ``<hex>`` is the leaf hash of the original line:
the carried line changes, its leaf in the signed Merkle tree does not, so whoever holds the
original line can prove it (``walkback verify --reveal``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from walkback.journal.errors import ExportError

MARK = "[redacted leaf {}]"
KEEP = frozenset(
    {
        "v",
        "lsn",
        "seq",
        "ts",
        "timestamp",
        "run",
        "agent",
        "type",
        "ref",
        "prev",
        "h",
        "id",
        "uuid",
        "parentUuid",
        "sessionId",
        "role",
        "status",
        "tool",
        "name",
    }
)
"""Keys an agent rule keeps: the structure that says what a record is and where it belongs."""


@dataclass(frozen=True)
class Rule:
    """One ``--redact`` rule."""

    text: str
    """As given on the command line (recorded with each redaction)."""
    kind: str
    """``field``, ``regex`` or ``agent``."""
    path: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    agent: str = ""
    hint: tuple[bytes, ...] = ()
    """Words one of which the line holds (in lower case) if the rule can match it: a line with
    none is left as it is, unparsed (the secret detectors have them; without, every line is read)."""
    near: re.Pattern[bytes] | None = None
    """Then a pattern the lower-case line must match (a word followed by ``=`` or ``:``)."""
    check: Callable[[re.Match[str]], bool] | None = None
    """Which matches to hide (the rest are kept); with a ``v`` group only that group is hidden."""

    def sub(self, text: str, mark: str) -> tuple[str, int]:
        """``text`` with this regular expression's matches hidden, and how many were."""
        assert self.pattern is not None
        if self.check is None and "v" not in self.pattern.groupindex:
            return self.pattern.subn(mark, text)
        hidden = 0

        def one(m: re.Match[str]) -> str:
            nonlocal hidden
            if self.check is not None and not self.check(m):
                return m.group()
            hidden += 1
            if "v" not in self.pattern.groupindex:  # type: ignore[union-attr]
                return mark
            start, end = m.span("v")
            return m.string[m.start() : start] + mark + m.string[end : m.end()]

        return self.pattern.sub(one, text), hidden


def parse_rule(text: str) -> Rule:
    """``agent:NAME``, ``re:PATTERN`` or a dotted field path (``*`` matches any key or index).

    Raises:
        ExportError: an empty rule or a regular expression that does not compile.
    """
    if text.startswith("agent:") and text[6:]:
        return Rule(text, "agent", agent=text[6:])
    if text.startswith("re:") and text[3:]:
        try:
            return Rule(text, "regex", pattern=re.compile(text[3:]))
        except re.error as e:
            raise ExportError(f"--redact {text!r}: not a regular expression: {e}") from None
    path = tuple(p for p in text.split("."))
    if not text or any(not p for p in path):
        raise ExportError(
            f"--redact {text!r}: expected agent:NAME, re:PATTERN or a field path like args.content"
        )
    return Rule(text, "field", path=path)


def redact_line(
    line: bytes, rules: list[Rule], mark: str, agent_of_line: str | None
) -> tuple[bytes, list[str]]:
    """``line`` with what ``rules`` match replaced by ``mark``, and the rules that matched.

    A line that is not a JSON object or array is redacted as text (a regular expression, or a whole
    agent); in JSON the rules see the decoded strings, so an escape cannot hide a secret.
    """
    low = line.lower() if any(r.hint for r in rules) else line
    rules = [
        r
        for r in rules
        if not r.hint or (any(w in low for w in r.hint) and (r.near is None or r.near.search(low)))
    ]
    if not rules:
        return line, []
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        record = None
    hits: list[str] = []
    was_list = isinstance(record, list)
    if was_list:
        record = {"": record}  # the same walk over its strings; unwrapped below
    if not isinstance(record, dict):
        text = line.decode("utf-8", "replace")
        for r in rules:
            if r.kind == "agent" and agent_of_line == r.agent:
                return mark.encode(), [r.text]
            if r.pattern is not None:
                text, n = r.sub(text, mark)
                if n:
                    hits.append(r.text)
        return (text.encode(), hits) if hits else (line, hits)
    for r in rules:
        if r.kind == "agent":
            if agent_of_line == r.agent:
                record = {k: (v if k in KEEP else _all(v, mark)) for k, v in record.items()}
                hits.append(r.text)
        elif r.kind == "field":
            if _at_path(record, r.path, mark):
                hits.append(r.text)
        else:
            assert r.pattern is not None
            found = [False]
            record = _strings(record, functools.partial(_sub, r, mark=mark, found=found))
            if found[0]:
                hits.append(r.text)
    if not hits:
        return line, hits
    return orjson.dumps(record[""] if was_list else record), hits


def _sub(rule: Rule, s: str, *, mark: str, found: list[bool]) -> str:
    out, n = rule.sub(s, mark)
    found[0] = found[0] or n > 0
    return out


def _all(value: Any, mark: str) -> Any:
    """Every string, number and list element below ``value`` hidden; the shape of objects kept."""
    if isinstance(value, dict):
        return {k: _all(v, mark) for k, v in value.items()}
    if value is None or isinstance(value, bool):
        return value
    return mark


def _strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, fn) for v in value]
    return value


def _at_path(node: Any, path: tuple[str, ...], mark: str) -> bool:
    """Replace the values at ``path`` below ``node`` in place; whether any was there."""
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        keys = list(node) if head == "*" else [head] if head in node else []
    elif isinstance(node, list):
        keys = (
            list(range(len(node)))
            if head == "*"
            else [int(head)]
            if head.isdigit() and int(head) < len(node)
            else []
        )
    else:
        return False
    hit = False
    for k in keys:
        if rest:
            hit = _at_path(node[k], rest, mark) or hit
        else:
            node[k] = mark
            hit = True
    return hit
