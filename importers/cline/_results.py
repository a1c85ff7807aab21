"""Tool results as the model saw them, from ``api_conversation_history.json``, in order.

Cline sends a tool's result in the next user message, either as two text blocks (XML tool calls:
``[replace_in_file for 'src/a.py'] Result:`` then the result) or as a ``tool_result`` block whose
``tool_use_id`` names a ``tool_use`` of the message before (native tool calls). The UI messages
carry no ids, so each UI tool message is paired with the next result of the same tool and target,
looking only a few results ahead, never back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..fields import mapping, string

HEADER = re.compile(r"^\[(?P<name>[\w.:-]+)(?: for '(?P<target>.*?)')?(?: in '[^']*')?\] Result:\s*$", re.S)
"""The text block before an XML tool call's result (``ToolDisplayUtils.getToolDescription``)."""
FINAL = re.compile(r'<final_file_content path="[^"]*">\n(?P<text>.*)\n</final_file_content>', re.S)
"""The file as saved, which Cline sends back after an edit (``formatResponse.fileEdit...``)."""
DENIED = "The user denied this operation"
FAILED = ("The tool execution failed", "Error ", "Error:", "[ERROR]", "Task was interrupted")
HEAD = max(len(p) for p in (DENIED, *FAILED))
"""Characters of a result's text its status is read from."""
LOOKAHEAD = 16
TARGET_KEYS = ("path", "absolutePath", "command", "url", "server_name", "regex", "question")


@dataclass(frozen=True)
class Result:
    """One tool result of the API history."""

    item: int
    """Index of the user message in the API history."""
    block: int
    """Index of the block that holds the result (the header block for an XML call)."""
    name: str
    target: str
    head: str
    """The start of the result's text: what its status is read from (the whole text stays in the
    history, re-read for the detail)."""
    error: bool = False
    call_id: str = ""

    @property
    def status(self) -> str:
        if self.head.startswith(DENIED):
            return "denied"
        return "failed" if self.error or self.head.startswith(FAILED) else "ok"


def block_text(block: Any) -> str:
    """The text of a content block, or of a ``tool_result``'s content (a string or blocks)."""
    b = mapping(block)
    content = b.get("content", b.get("text"))
    if isinstance(content, list):
        return "\n".join(string(mapping(x).get("text")) for x in content)
    return string(content)


def target_of(args: dict[str, Any]) -> str:
    for key in TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value.strip().split("\n", 1)[0][:240]
    return ""


def results(history: Iterable[Any]) -> list[Result]:
    """Every tool result of the API history, in order."""
    out: list[Result] = []
    uses: dict[str, tuple[str, str]] = {}
    for k, message in enumerate(history):
        m = mapping(message)
        content = m.get("content")
        if not isinstance(content, list):
            continue
        if m.get("role") == "assistant":
            for block in content:
                b = mapping(block)
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    uses[b["id"]] = (string(b.get("name")), target_of(mapping(b.get("input"))))
            continue
        for j, block in enumerate(content):
            b = mapping(block)
            if b.get("type") == "tool_result":
                cid = string(b.get("tool_use_id"))
                name, target = uses.get(cid, ("", ""))
                out.append(Result(k, j, name, target, block_text(b)[:HEAD], b.get("is_error") is True, cid))
            elif b.get("type") == "text":
                head = HEADER.match(string(b.get("text")))
                if head is not None:
                    nxt = content[j + 1] if j + 1 < len(content) else None
                    said = block_text(nxt) if mapping(nxt).get("type") == "text" else ""
                    out.append(Result(k, j, head.group("name"), head.group("target") or "", said[:HEAD]))
    return out


def result_text(message: Any, block: int) -> tuple[str, bool, str]:
    """``(text, is_error, call id)`` of the result at ``block`` of an API message (for details)."""
    content = mapping(message).get("content")
    if not isinstance(content, list) or not 0 <= block < len(content):
        return "", False, ""
    b = mapping(content[block])
    if b.get("type") == "tool_result":
        return block_text(b), b.get("is_error") is True, string(b.get("tool_use_id"))
    nxt = content[block + 1] if block + 1 < len(content) else None
    return (block_text(nxt) if mapping(nxt).get("type") == "text" else ""), False, ""


def final_content(text: str) -> str | None:
    """The saved file Cline sends back after an edit, if the result carries it."""
    m = FINAL.search(text)
    return m.group("text") if m is not None else None


def in_request(request: str, names: tuple[str, ...], target: str) -> str | None:
    """A tool's result as quoted in an ``api_req_started`` request (Cline copies the user message
    it sends there), or None."""
    for m in re.finditer(r"^\[([\w.:-]+)(?: for '(.*?)')?(?: in '[^']*')?\] Result:[ \t]*\n", request, re.M):
        if m.group(1) in names and (not target or not m.group(2) or same(m.group(2), target)):
            rest = request[m.end() :]
            stop = re.search(r"^\[[\w.:-]+(?: for '.*?')?\] Result:|^<environment_details>", rest, re.M)
            return rest[: stop.start() if stop else len(rest)].strip()
    return None


def same(a: str, b: str) -> bool:
    """Two names of one target (paths compared without ``./`` and trailing slashes)."""
    return a.strip().removeprefix("./").rstrip("/") == b.strip().removeprefix("./").rstrip("/")


class Pairing:
    """Results handed out in order to the UI's tool messages."""

    def __init__(self, found: list[Result]) -> None:
        self.found = found
        self.at = 0

    def take(self, names: tuple[str, ...], target: str) -> Result | None:
        for k in range(self.at, min(self.at + LOOKAHEAD, len(self.found))):
            r = self.found[k]
            if r.name in names and (not target or not r.target or same(r.target, target)):
                self.at = k + 1
                return r
        return None
