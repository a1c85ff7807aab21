"""What one line of Aider's output says: the lines with a meaning of their own, and their fields.

The wording is Aider's (``aider/io.py``, ``aider/coders/base_coder.py``, ``aider/commands.py``) as
it has stayed across versions; a line that matches none of these is plain output.
"""

from __future__ import annotations

import re

SPECIAL = re.compile(
    rb"> (?:"
    rb"(?P<tokens>Tokens: )"
    rb"|(?P<applied>Applied edit to )"
    rb"|(?P<commit>Commit [0-9a-f]{7,40} )"
    rb"|(?P<running>Running )"
    rb"|(?P<again>\^C again to exit)"
    rb"|(?P<exit>\^C KeyboardInterrupt)"
    rb"|(?P<nomatch>## SearchReplaceNoExactMatch: )"
    rb"|(?P<editerror>The LLM did not conform to the edit format"
    rb"|# \d+ SEARCH/REPLACE blocks? failed to match)"
    rb"|(?P<others># The other \d+ SEARCH/REPLACE blocks? were applied successfully)"
    rb"|(?P<dryrun>Did not apply edit to )"
    rb"|(?P<model>(?:Main model|Models?): )"
    rb"|(?P<version>Aider v\d)"
    rb")"
)
"""Tool lines that are events (or facts) of their own; ``m.lastgroup`` names which."""
QUESTION = re.compile(rb"^> (?P<q>[^\r\n]*?\?)(?: \(Y\)es[^\r\n]*?\]:)? (?P<a>[ynasd])[ \t]*\r?\n?$")
"""``confirm_ask``: the question, Aider's options (newer versions), the answer's first letter."""
APPROVING = frozenset(b"ya")
TOKENS = re.compile(rb"([\d][\d.,]*)([kKmM]?) (sent|received|cache write|cache hit)")
COST = re.compile(rb"\$([\d.]+) (?:request|message)")
MODEL = re.compile(rb"^> (?:Main model|Models?): (\S+) with (\S+) edit format")
NO_MATCH_FILE = re.compile(rb"failed to exactly match lines in (.+?)\s*$")
COMMANDS = {"/run": "run", "/test": "test", "/git": "git", "!": "run"}
"""User commands that run a shell command (``!`` is ``/run``'s alias); the value is the tool name."""
EXITS = ("/exit", "/quit", "/ex", "/qu")


def asks(line: bytes) -> bool:
    """The line may be a confirm prompt with its answer (the cheap test before :func:`question`)."""
    tail = line.rstrip()
    return len(tail) > 3 and tail[-2:-1] == b" " and tail[-1] in b"ynasd" and b"?" in tail


def question(line: bytes) -> tuple[str, bool] | None:
    """``(question, approved)`` of a confirm prompt with its answer, else None."""
    if not asks(line):
        return None
    m = QUESTION.match(line)
    if m is None:
        return None
    return m.group("q").decode("utf-8", "replace"), m.group("a")[0] in APPROVING


def count(number: bytes, unit: bytes) -> int | None:
    """``5,244`` -> 5244, ``1.2k`` -> 1200, ``3M`` -> 3000000."""
    try:
        value = float(number.replace(b",", b""))
    except ValueError:
        return None
    scale = {b"k": 1e3, b"K": 1e3, b"m": 1e6, b"M": 1e6}.get(unit, 1.0)
    return round(value * scale)


def tokens(line: str) -> dict[str, int | float | None]:
    """Counts of a ``Tokens: ... sent, ... received. Cost: $x request, $y session.`` line."""
    data = line.encode("utf-8", "replace")
    found: dict[str, int | float | None] = {}
    for number, unit, what in TOKENS.findall(data):
        found[what.decode()] = count(number, unit)
    cost = COST.search(data)
    if cost is not None:
        try:
            found["cost"] = float(cost.group(1))
        except ValueError:
            pass
    return found


def command(text: str) -> tuple[str, str] | None:
    """``(tool, command)`` of user input that runs a shell command (``/run ls``, ``!ls``)."""
    first = text.split("\n", 1)[0].strip()
    if first.startswith("!"):
        return COMMANDS["!"], first[1:].strip()
    word, _, rest = first.partition(" ")
    tool = COMMANDS.get(word)
    return (tool, rest.strip()) if tool is not None and rest.strip() else None


def user_text(raw: str) -> str:
    """User input as typed: the ``#### `` prefix and the trailing line break off every line."""
    lines = []
    for line in raw.split("\n"):
        line = line.rstrip("\r")
        line = line[5:] if line.startswith("#### ") else line[4:] if line.startswith("####") else line
        lines.append(line.removesuffix("  "))
    text = "\n".join(lines).strip("\n")
    return "" if text == "<blank>" else text


def tool_text(raw: str) -> str:
    """Tool output as shown: the ``> `` prefix and the trailing line break off every line."""
    lines = []
    for line in raw.split("\n"):
        line = line.rstrip("\r")
        line = line[2:] if line.startswith("> ") else "" if line.rstrip() == ">" else line
        line = line.removesuffix("  ")
        lines.append(line if line.strip() else "")
    return "\n".join(lines).strip("\n")
