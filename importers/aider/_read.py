"""Mapping the records of an Aider chat history to timeline events.

Aider writes what happened as it happens and nothing about it afterwards, so each record is mapped
when it is read, with a little state: the edits of the last reply wait for their ``Applied edit to``
line, a command waits for the record that follows it (its output, or whatever Aider did next), and
a run of plain tool lines is one event. Edits still waiting when the conversation moves on were
never applied (``failed``); edits and commands still waiting at the end of the file are what a
crash left (``pending``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.kinds import FILE, INFERRED, KIND_INDEX, OTHER
from walkback.timeline.session import parse_time
from walkback.timeline.sources import TextSpans

from .. import edit_blocks
from ..records import written_lately
from . import _lines as L
from ._companions import INPUT_HISTORY, LLM_HISTORY, Inputs, LlmLog
from ._scan import HEADER, PLAIN, RUN, TOOL, USER, Scanner

At = tuple[int, int, int]
"""A record's span and first line: ``(start, end, line)``."""
AGENT = "main"
MODELINE = b"-*-"
EDIT_TOOLS = {"replace": "edit", "whole": "write", "patch": "patch"}
"""Tool names of the edits a reply makes, by the kind of block that wrote them."""
SUBJECT_QUESTIONS = ("Run shell command", "Add ", "Create new file", "Allow ")
"""Questions whose subject (a command, a file) Aider prints on the line before them."""
APPLIED, NOT_APPLIED = b"> Applied edit to ", b"> Did not apply edit to "
MERGING = frozenset({"output", "chat started", "edit error", "failed to match", "command output"})
"""Held events that the plain tool lines after them belong to."""


@dataclass
class Held:
    """An event whose span may still grow (plain tool lines after it belong to it)."""

    kind: str
    type: str
    start: int
    end: int
    line: int
    ts: float = math.nan
    status: str = ""
    ref: int = -1
    tool: str = ""
    target: str = ""


@dataclass
class Run:
    """What the banner of the current run said."""

    started: str = ""
    event: int = -1
    model: str = ""
    edit_format: str = ""
    version: str = ""
    task: str = ""
    models: list[tuple[int, str]] = field(default_factory=list)


class Reader:
    """Fills the builder from one chat history (or one run of it)."""

    def __init__(self, b: SessionBuilder, path: Path, scanner: Scanner) -> None:
        self.b = b
        self.path = path
        self.scanner = scanner
        self.src = b.source(TextSpans(path))
        self.ids = b.pool.index.get
        self.agent = b.intern(AGENT)
        self.f = open(path, "rb")  # noqa: SIM115 - closed by read() when it is done
        self.held: Held | None = None
        self.run = Run()
        self.runs: list[dict[str, Any]] = []
        self.models: list[tuple[int, str]] = []
        """``(first event, model)`` of each model line (the banner's, a ``/model``'s)."""
        self.edits: dict[str, list[int]] = {}
        """Edits of the last reply still waiting for their result, by file."""
        self.command = -1
        """A command waiting for the record that follows it."""
        self.shell = -1
        """An approved ``Run shell command?`` request: its ``Running`` lines are the commands."""
        self.asking = False
        """The last user input was ``/ask``: the reply proposes, it edits nothing."""
        self.last_ts = math.nan
        self.ended = ""
        self.task = ""
        base = path.parent
        self.inputs = Inputs(base / INPUT_HISTORY) if (base / INPUT_HISTORY).is_file() else None
        self.llm: LlmLog | None = None
        if (base / LLM_HISTORY).is_file():
            self.llm = LlmLog(base / LLM_HISTORY)
            self.llm_src = b.source(TextSpans(base / LLM_HISTORY))

    # -- events ----------------------------------------------------------------------------------
    def add(
        self,
        kind: str,
        typ: str,
        at: At,
        *,
        ts: float = math.nan,
        tool: str = "",
        target: str = "",
        status: str = "",
        ref: int = -1,
        sub: int = -1,
        flags: int = 0,
        src: int | None = None,
    ) -> int:
        """One event whose raw record is the span ``at`` (``(start, end, line)``); the hot path, so
        strings are interned by a lookup first and the row goes in as it is stored."""
        start, end, line = at
        get, intern = self.ids, self.b.intern
        return self.b.row(
            KIND_INDEX.get(kind, OTHER),
            get(typ) or intern(typ or "?"),
            -1,
            ts,
            self.agent,
            get(tool) or intern(tool),
            get(target) or intern(target),
            get(status) or intern(status),
            ref,
            self.src if src is None else src,
            line,
            start,
            end - start,
            sub,
            flags,
        )

    def hold(self, h: Held) -> None:
        self.release()
        self.held = h

    def release(self) -> int:
        h, self.held = self.held, None
        if h is None:
            return -1
        at = (h.start, h.end, h.line)
        i = self.add(h.kind, h.type, at, ts=h.ts, status=h.status, ref=h.ref, tool=h.tool, target=h.target)
        if h.type == "chat started":
            self.run.event = i
        return i

    def raw(self, start: int, end: int) -> bytes:
        found = self.scanner.span(start, end)
        return found if found is not None else os.pread(self.f.fileno(), end - start, start)

    def text(self, start: int, end: int) -> str:
        return self.raw(start, end).decode("utf-8", "replace")

    # -- what is still waiting -------------------------------------------------------------------
    def settle(self, at: At, *, status: str = "ok") -> None:
        """A waiting command is over: the next record is not its output (an inferred result)."""
        if self.command >= 0:
            here = (at[0], at[0], at[2])
            self.add("tool_result", "no output", here, ref=self.command, status=status, flags=INFERRED)
            self.b.close(("command", self.command))
            self.b.set_status(self.command, status)
            self.command = -1

    def moved_on(self) -> None:
        """The conversation went on: edits never reported applied were not applied."""
        for calls in self.edits.values():
            for i in calls:
                self.b.close(("edit", i))
                self.b.set_status(i, "failed")
        self.edits = {}

    # -- records ---------------------------------------------------------------------------------
    def record(self, kind: str, at: At, head: bytes) -> None:
        if kind == PLAIN:
            self.plain(at)
            return
        if kind == TOOL:
            self.tool(at, head)
            return
        self.release()
        if kind == RUN:
            self.header(at, head)
            return
        self.settle(at)
        if kind == USER:
            self.user(at)
        elif at[2] == 1 and self.raw(at[0], at[0] + len(MODELINE)) == MODELINE:
            self.add("other", "modeline", at)
        else:
            self.reply(at)

    def header(self, at: At, head: bytes) -> None:
        if self.edits or self.command >= 0:  # the run stopped with work in flight
            self.settle(at, status="failed")
            self.moved_on()
            self.add("run_end", "no end", (at[0], at[0], at[2]), status="crashed", flags=INFERRED)
        self.finish_run()
        started = head[len(HEADER) :].decode("utf-8", "replace").strip()
        self.run = Run(started=started)
        ts = parse_time(started)
        self.last_ts = ts if not math.isnan(ts) else self.last_ts
        self.b.session.runs.append(started)
        self.hold(Held("run_start", "chat started", *at, ts=ts))
        self.ended = ""
        self.shell = -1

    def finish_run(self) -> None:
        r = self.run
        if r.started or r.event >= 0:
            keep = ("started", "event", "model", "edit_format", "version", "task")
            self.runs.append({k: getattr(r, k) for k in keep})

    def user(self, at: At) -> None:
        self.moved_on()
        self.shell = -1
        text = L.user_text(self.text(at[0], at[1]))
        ts = self.inputs.time_of(text) if self.inputs is not None and text else math.nan
        self.last_ts = ts if not math.isnan(ts) else self.last_ts
        self.asking = text.startswith("/ask")
        run = L.command(text)
        if run is not None:
            tool, cmd = run
            typ = "!" if text.startswith("!") else text.split(" ", 1)[0]
            self.command = self.add(
                "tool_call", typ, at, ts=ts, tool=tool, target=cmd[:240], status="pending"
            )
            self.b.open(("command", self.command), self.command)
            return
        typ = "command" if text.startswith("/") else "user"
        self.add("message", typ, at, ts=ts)
        self.ended = "completed" if text.split(" ", 1)[0] in L.EXITS else ""
        if typ == "user" and text:
            self.run.task = self.run.task or text
            self.task = self.task or text

    def reply(self, at: At) -> None:
        self.moved_on()
        start, _, line = at
        exact = self.raw(at[0], at[1]).decode("utf-8", "surrogateescape")  # offsets stay byte-true
        ts = math.nan
        if self.llm is not None:
            call, ts = self.llm.match(_clean(exact))
            if call is not None:
                sent = (call.offset, call.offset + call.length, call.line)
                self.add("model_call", "TO LLM", sent, src=self.llm_src, ts=call.sent, tool=self.run.model)
        self.add("message", "assistant", at, ts=ts)
        if self.asking:
            return
        for k, (path, kind, first, last) in enumerate(edits(exact, self.run.edit_format)):
            span = (
                start + _size(exact[:first]),
                start + _size(exact[:last]),
                line + exact.count("\n", 0, first),
            )
            tool, target = EDIT_TOOLS[kind], _clean(path)[:1000]
            i = self.add(
                "tool_call", kind, span, tool=tool, target=target, status="pending", sub=k, flags=FILE, ts=ts
            )
            self.edits.setdefault(target, []).append(i)
            self.b.open(("edit", i), i)

    # -- tool output -----------------------------------------------------------------------------
    def tool(self, at: At, head: bytes) -> None:
        m = L.SPECIAL.match(head)
        what = m.lastgroup if m is not None else None
        asked = L.question(head) if what is None else None
        if what in ("model", "version"):
            self.banner(what, head)
            what = None
        if what is None and asked is None or what == "running" and self.shell < 0:
            self.plain(at)
            return
        if what == "editerror" and self.held is not None and self.held.type == "edit error":
            self.held.end = at[1]  # the lines of one edit error
            return
        self.release()
        self.settle(at, status="failed" if what == "again" else "ok")
        if asked is not None:
            self.ask(asked, at)
        elif what == "tokens":
            self.add("model_result", "tokens", at, tool=self.run.model)
        elif what in ("applied", "dryrun", "nomatch"):
            self.edit_result(what, head, at)
        elif what == "others":
            self.others(at)
        elif what == "commit":
            sha = head[len(b"> Commit ") :].split(b" ", 1)[0].decode("ascii", "replace")
            self.add("checkpoint", "commit", at, target=sha)
        elif what == "running":
            cmd = head[len(b"> Running ") :].strip().decode("utf-8", "replace")[:240]
            self.command = self.add("tool_call", "running", at, tool="shell", target=cmd, status="pending")
            self.b.open(("command", self.command), self.command)
            self.b.session.gated.setdefault(self.shell, self.command)
        elif what == "editerror":
            self.hold(Held("error", "edit error", *at, status="error"))
        elif what == "again":
            self.add("error", "interrupt", at)
        elif what == "exit":
            self.moved_on()
            self.add("run_end", "KeyboardInterrupt", at, status="cancelled")
            self.ended = "cancelled"

    def banner(self, what: str, head: bytes) -> None:
        """A line of a run's banner (or of ``/model``): the version, the model and its edit format."""
        if what == "version":
            self.run.version = self.run.version or head[2:].strip().decode("utf-8", "replace")
            return
        m = L.MODEL.match(head)
        if m is not None:
            self.run.model = m.group(1).decode("utf-8", "replace")
            self.run.edit_format = m.group(2).decode("utf-8", "replace")
            self.models.append((self.b.count, self.run.model))

    def plain(self, at: At) -> None:
        h = self.held
        if h is not None and h.type in MERGING:
            h.end = at[1]
            return
        if self.command >= 0:
            self.hold(Held("tool_result", "command output", *at, status="ok", ref=self.command))
            self.b.close(("command", self.command))
            self.b.set_status(self.command, "ok")
            self.command = -1
            return
        self.hold(Held("other", "output", *at))

    def line_before(self, at: int) -> str:
        """The tool line just before offset ``at`` (a prompt's subject: a command, a file)."""
        before = self.raw(max(0, at - 4096), at).rstrip(b"\r\n").rsplit(b"\n", 1)[-1]
        return L.tool_text(before.decode("utf-8", "replace"))[:240] if before.startswith(b">") else ""

    def ask(self, asked: tuple[str, bool], at: At) -> None:
        q, yes = asked
        subject = self.line_before(at[0]) if q.startswith(SUBJECT_QUESTIONS) else ""
        tool = "shell" if q.startswith("Run shell command") else ""
        answer = "approved" if yes else "denied"
        req = self.add("approval_request", "question", at, tool=tool, target=subject, sub=0, status=answer)
        self.add("approval_decision", "answer", at, ref=req, tool=tool, target=subject, sub=1, status=answer)
        self.shell = req if tool and yes else -1

    def edit_result(self, what: str, head: bytes, at: At) -> None:
        if what == "nomatch":
            found = L.NO_MATCH_FILE.search(head)
            path = found.group(1).decode("utf-8", "replace") if found else ""
        else:
            prefix = APPLIED if what == "applied" else NOT_APPLIED
            path = head[len(prefix) :].strip().decode("utf-8", "replace").removesuffix("(--dry-run)").strip()
        calls = self.edits.get(path)
        status = "ok" if what == "applied" else "failed"
        typ = {"applied": "applied edit", "dryrun": "did not apply", "nomatch": "failed to match"}[what]
        if calls:
            i = calls.pop(0)
            if not calls:
                del self.edits[path]
            self.b.close(("edit", i))
            self.b.set_status(i, status)
            self.hold(Held("tool_result", typ, *at, status=status, ref=i, target=path))
        elif what == "applied":  # no block of the reply names the file: the edit is known from this line
            self.add(
                "tool_call", typ, at, tool="edit", target=path[:1000], status="ok", flags=FILE | INFERRED
            )
        else:
            self.hold(Held("error", typ, *at, status="error", target=path))

    def others(self, at: At) -> None:
        """``The other N blocks were applied``: the edits that did not fail did land."""
        for path, calls in self.edits.items():
            for i in calls:
                self.add("tool_result", "blocks applied", at, ref=i, status="ok", target=path, flags=INFERRED)
                self.b.close(("edit", i))
                self.b.set_status(i, "ok")
        self.edits = {}

    # -- the end ---------------------------------------------------------------------------------
    def finish(self) -> None:
        self.release()
        self.finish_run()
        s = self.b.session
        runs = [r for r in self.runs if r["event"] >= 0]
        s.header = {
            "runs": runs,
            "run_events": [r["event"] for r in runs],
            "models": [m for _, m in self.models],
            "model_events": [i for i, _ in self.models],
        }
        s.task = self.task
        first = self.runs[0]["started"] if self.runs else ""
        self.b.agent(AGENT, run=first, task=self.task, label="aider")
        if self.b.unanswered():
            s.status = "crashed"
        elif written_lately(self.path, self.last_ts):
            s.status = "running"
        else:
            s.status = self.ended or "unknown"


def edits(text: str, edit_format: str) -> list[tuple[str, str, int, int]]:
    """``(path, kind, start, end)`` of each file a reply edits: one entry per file, spanning its
    blocks (character offsets in ``text``)."""
    if "SEARCH" in text:
        blocks = edit_blocks.search_replace(text)
    elif edit_format.endswith("whole"):
        blocks = edit_blocks.whole_files(text)
    elif "diff" in edit_format or "```diff" in text:
        blocks = edit_blocks.unified_diffs(text)
    else:
        blocks = []
    out: dict[str, tuple[str, str, int, int]] = {}
    for blk in blocks:
        if not blk.path:
            continue
        seen = out.get(blk.path)
        out[blk.path] = (blk.path, blk.kind, seen[2] if seen else blk.start, blk.end)
    return list(out.values())


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


def _clean(text: str) -> str:
    """Text decoded byte-true, made valid Unicode (undecodable bytes become U+FFFD)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def run_offsets(path: Path) -> list[tuple[int, int]]:
    """``(offset, line)`` of every run header of the file."""
    out: list[tuple[int, int]] = []
    with open(path, "rb") as f:
        for kind, start, _end, line, _head in Scanner().records(f):
            if kind == RUN:
                out.append((start, line))
    return out


def read_history(b: SessionBuilder, path: Path, part: str | None) -> Iterator[None]:
    """The whole file, or with ``part`` (``"3"``) its third run only."""
    start, stop, line = 0, None, 1
    if part is not None:
        runs = run_offsets(path)
        if not part.isdigit() or not 1 <= int(part) <= len(runs):
            raise ImporterError(f"no run {part!r} in this chat history ({len(runs)} runs)", path=path)
        k = int(part) - 1
        start, line = runs[k]
        stop = runs[k + 1][0] if k + 1 < len(runs) else None
    sc = Scanner(offset=start, line=line)
    try:
        r = Reader(b, path, sc)
    except OSError as e:
        raise ImporterError(f"cannot read: {e.strerror}", path=path) from None
    try:
        for kind, a, z, n, head in sc.records(r.f, stop=stop):
            r.record(kind, (a, z, n), head)
            if b.due():
                yield
        r.finish()
    finally:
        r.f.close()
