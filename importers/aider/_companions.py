"""The files Aider keeps beside its chat history, read for what the history lacks: times and prompts.

* ``.aider.input.history`` (prompt_toolkit's ``FileHistory``): ``# <local time>`` then the input's
  lines, each after a ``+``. It dates each user input (the chat history dates only its runs).
* ``.aider.llm.history`` (``--llm-history-file``): ``TO LLM <time>`` blocks (the messages sent,
  each line after its ``ROLE``) and ``LLM RESPONSE <time>`` blocks (``ASSISTANT`` lines). They
  become the model calls before each reply, with the prompt as their raw record.

Both are matched to the chat history in order, by text, looking only a few entries ahead; an entry
that matches nothing is left out (the histories also hold runs the chat history does not).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from walkback.timeline.session import parse_time

INPUT_HISTORY = ".aider.input.history"
LLM_HISTORY = ".aider.llm.history"
LOOKAHEAD = 32
"""Entries of a companion looked at past the last one matched."""
KEY_CHARS = 160
"""Characters of a reply compared with a logged response."""
LLM_BLOCK = re.compile(rb"^(TO LLM|LLM RESPONSE) (\d{4}-\d\d-\d\d[T ][\d:.]+)\r?$")
_WS = re.compile(r"\s+")


def _key(text: str) -> str:
    return _WS.sub(" ", text).strip()[:KEY_CHARS]


class Inputs:
    """User inputs with their times, matched in order."""

    def __init__(self, path: Path) -> None:
        self.entries: list[tuple[float, str]] = []
        self.at = 0
        try:
            data = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return
        when, lines = math.nan, list[str]()
        for line in data.split("\n"):
            if line.startswith("# "):
                if lines:
                    self.entries.append((when, "\n".join(lines)))
                when, lines = parse_time(line[2:].strip()), []
            elif line.startswith("+"):
                lines.append(line[1:].rstrip("\r"))
        if lines:
            self.entries.append((when, "\n".join(lines)))

    def time_of(self, text: str) -> float:
        """The time of the next input equal to ``text`` (NaN when none is near)."""
        want = text.strip()
        for k in range(self.at, min(self.at + LOOKAHEAD, len(self.entries))):
            when, typed = self.entries[k]
            if typed.strip() == want:
                self.at = k + 1
                return when
        return math.nan


@dataclass(frozen=True)
class Call:
    """A ``TO LLM`` block and the time of the response that followed it."""

    offset: int
    length: int
    line: int
    sent: float
    answered: float


class LlmLog:
    """Model calls of the LLM history, matched to replies by the start of their text."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.responses: list[tuple[str, Call | None, float]] = []
        self.at = 0
        try:
            f = open(path, "rb")  # noqa: SIM115 - closed below
        except OSError:
            return
        with f:
            self._read(f)

    def _read(self, f: BinaryIO) -> None:
        """One pass over the lines, keeping the span of each prompt and the start of each response."""
        offset = 0
        sent: tuple[int, int, float] | None = None  # offset, line, time of the open TO LLM block
        calls: list[Call | None] = []
        said: list[list[bytes]] = []
        answered: list[float] = []
        for n, raw in enumerate(f, 1):
            m = LLM_BLOCK.match(raw.rstrip(b"\n")) if raw[:2] in (b"TO", b"LL") else None
            if m is not None:
                when = parse_time(m.group(2).decode())
                if m.group(1) == b"TO LLM":
                    sent = (offset, n, when)
                else:
                    calls.append(Call(sent[0], offset - sent[0], sent[1], sent[2], when) if sent else None)
                    said.append([])
                    answered.append(when)
                    sent = None
            elif said and sent is None and sum(map(len, said[-1])) < 4 * KEY_CHARS:
                said[-1].append(raw)
            offset += len(raw)
        for call, text, when in zip(calls, said, answered, strict=True):
            lines = b"".join(text).decode("utf-8", "replace").split("\n")
            reply = "\n".join(x.removeprefix("ASSISTANT").removeprefix(" ") for x in lines)
            self.responses.append((_key(reply), call, when))

    def match(self, reply: str) -> tuple[Call | None, float]:
        """The call that produced ``reply`` and the time of its response (None, NaN: not found)."""
        want = _key(reply)
        for k in range(self.at, min(self.at + LOOKAHEAD, len(self.responses))):
            key, call, when = self.responses[k]
            if key and key.startswith(want[: len(key)]):
                self.at = k + 1
                return call, when
        return None, math.nan
