"""One session from two sources: the agent's transcript and the hook journal, joined by call id.

The transcript is the conversation (prompts, replies, tool calls and their results as the model saw
them); the hook journal is what walkback recorded around each call while it ran (the pre and
expected post hash of a file, its images, the observed hash, a snapshot, a checkpoint, recovery
decisions). Merging keeps every transcript event and adds to it:

* a transcript tool call whose call id the journal has (for an agent whose hooks get no id, the
  oldest transcript call whose input has the digest the synthesized id ends with): its detail's
  file change takes the journal's ``pre``/``post`` hashes (and the images the intent carries), and
  its result's detail says how the hook verified it (the observed hash, or the mismatch: expected
  vs observed);
* a journal commit or fail of a call the transcript has no result for (a crash between the hook and
  the transcript's line): an event completing that call;
* journal records the transcript has no counterpart of (checkpoints, recovery decisions and briefs,
  intents whose call the transcript never wrote, and their completions): events of their own,
  read with the walkback journal importer's details, interleaved by time.

The journal's blobs serve the session's images. Nothing of the transcript is changed or dropped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.journal.blobs import BlobStore
from walkback.journal.errors import BlobError
from walkback.journal.hookpaths import input_digest
from walkback.journal.images import intent_image
from walkback.journal.reader import Record, Scanner
from walkback.journal.record import changes_file, target_of
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import Detail, FileEdit, ToolCall, ToolResult
from walkback.timeline.kinds import FILE
from walkback.timeline.session import DetailFn, Session, parse_time
from walkback.timeline.sources import JsonLines

from ..records import written_lately
from ..walkback_journal._details import details as journal_details
from ..walkback_journal._details import hashes, verification
from ..walkback_journal._vocab import TYPE_KIND, status
from ._locate import journal_for

SYNTHESIZED = re.compile(r"^\d+:[0-9a-f]{16}$")
"""A call id the hook made up for an agent whose payloads carry none (docs/hooks.md, "Call ids")."""
OWN_EVENTS = frozenset({"checkpoint", "recovery", "recovery.brief"})
"""Journal records that become events of their own (the transcript has nothing like them)."""


@dataclass
class Call:
    """What the hook journal holds about one of the agent's calls."""

    intents: list[dict[str, Any]] = field(default_factory=list)
    """Its intents in journal order (one per file for a tool that changes several: ``part``)."""
    ends: list[dict[str, Any]] = field(default_factory=list)
    """The commit or fail of each intent that has one."""


@dataclass
class Hooked:
    """The hook journal merged into a session (``Session.hooked``)."""

    journal: Path
    src: int
    """The journal's source number in the session: events read from it have this ``src``."""
    calls: dict[str, Call]
    """The journal's calls by the agent's call id."""
    base: DetailFn
    """The format importer's detail builder (before the merge)."""
    linked: int = 0
    """Transcript tool calls the journal has intents for."""
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    """``{call, target, expected, observed}`` of every commit whose observed hash is not the expected."""

    def describe(self, session: Session, i: int) -> Detail:
        """The detail of event ``i``: the journal importer's for the journal's own events, else the
        format importer's with what the journal adds about its call."""
        if session.table.src[i] == self.src:
            return journal_details(session, i)
        d = self.base(session, i)
        if isinstance(d, (ToolCall, ToolResult)) and d.call_id in self.calls:
            return _overlay(d, self.calls[d.call_id])
        return d

    def to_json(self) -> dict[str, Any]:
        return {"journal": str(self.journal), "linked_calls": self.linked, "mismatches": self.mismatches}


def merge(session: Session, root: Path | None = None) -> Session:
    """``session`` with its hook journal merged in (unchanged when it has none; see the module),
    looked for under the hooks folder ``root`` (default ``$WALKBACK_HOME/hooks``)."""
    path = journal_for(session, root)
    if path is None or session.hooked is not None:
        return session
    m = _Merger(session, path)
    for rec in Scanner(path):
        m.record(rec)
    return m.finish()


class _Merger:
    """One merge: the journal's records, in order, joined to the transcript's calls."""

    def __init__(self, session: Session, path: Path) -> None:
        base = session.describe
        self.ids, self.by_input = _transcript_calls(session, base)
        self.aliases: dict[str, str] = {}
        """A synthesized call id (``<order>:<input digest>``) -> the transcript's id of the same call."""
        self.b = SessionBuilder(session.format, describe=base, extend=session)
        self.hooked = Hooked(path, self.b.source(JsonLines(path)), {}, base)
        self.agent = next(iter(session.agents), "")
        self.event_of: dict[int, int] = {}
        """journal lsn -> the event standing for it (a transcript call, or an event added here)."""
        self.targets: dict[int, str] = {}
        self.last_ts = math.nan

    def record(self, rec: Record) -> None:
        d = rec.data
        self.last_ts = parse_time(d.get("ts"))
        typ = str(d.get("type", ""))
        call = self._call(typ, d.get("call"))
        if typ == "intent":
            self._intent(rec, call)
        elif typ in ("commit", "fail") and rec.closes in self.event_of:
            self._end(rec, call)
        elif typ in OWN_EVENTS:
            ref = d.get("ref")
            self._add(TYPE_KIND[typ], rec, status=status(typ, d), target=str(d.get("target", "")),
                      ref=self.event_of.get(ref, -1) if isinstance(ref, int) else -1)  # fmt: skip

    def _call(self, typ: str, given: object) -> str:
        """The call id a record names, as the transcript knows the call."""
        call = given if isinstance(given, str) else ""
        if typ == "intent" and call not in self.ids and call not in self.aliases and SYNTHESIZED.match(call):
            same = self.by_input.get(call.partition(":")[2])
            if same:
                self.aliases[call] = same.pop(0)  # the oldest transcript call with this input
        return self.aliases.get(call, call)

    def _add(self, kind: str, rec: Record, **fields: Any) -> int:
        typ = str(rec.data.get("type", ""))
        ts = parse_time(rec.data.get("ts"))
        return self.b.add(kind, type=typ, ts=ts, agent=self.agent, src=self.hooked.src, line=rec.line,
                          offset=rec.offset, length=rec.length, **fields)  # fmt: skip

    def _intent(self, rec: Record, call: str) -> None:
        d = rec.data
        self.targets[rec.lsn] = target_of(d)
        if call:
            self.hooked.calls.setdefault(call, Call()).intents.append(d)
        if call in self.ids:
            self.event_of[rec.lsn] = self.ids[call]
            self.hooked.linked += 1
        else:
            self.event_of[rec.lsn] = self._add(
                "tool_call", rec, tool=str(d.get("tool", "")), target=self.targets[rec.lsn], status="pending",
                flags=FILE if changes_file(d) else 0,
            )  # fmt: skip

    def _end(self, rec: Record, call: str) -> None:
        d = rec.data
        if call in self.hooked.calls:
            self.hooked.calls[call].ends.append(d)
        _mismatch(self.hooked, call, d)
        assert rec.closes is not None
        i = self.event_of[rec.closes]
        if (
            self.b.status_of(i) == "pending"
        ):  # the transcript has no result for it: the journal's completes it
            own = "failed" if d.get("type") == "fail" else status("commit", d)
            self.b.set_status(i, own)
            self._add("tool_result", rec, target=self.targets[rec.closes], status=own, ref=i)

    def finish(self) -> Session:
        self.b.interleave = True
        merged = self.b.finish()
        merged.hooked = self.hooked
        merged.describe = self.hooked.describe
        if merged.status != "running" and written_lately(self.hooked.journal, self.last_ts):
            merged.status = "running"  # its hooks are firing: the agent is at work
        merged.measures = None  # the format's measures know no journal hash: an export measures the details
        merged.blob_loader = _blobs(merged.blob_loader, BlobStore(self.hooked.journal.parent / "blobs"))
        return merged


def _transcript_calls(session: Session, base: DetailFn) -> tuple[dict[str, int], dict[str, list[str]]]:
    """The transcript's tool calls by call id (the first call of an id, if a source repeats one),
    and their ids by the digest of their input, in order (for the agents whose hooks get no id)."""
    ids: dict[str, int] = {}
    by_input: dict[str, list[str]] = {}
    for i in session.indices_where(kind="tool_call"):
        d = base(session, i)
        if isinstance(d, ToolCall) and d.call_id and d.call_id not in ids:
            ids[d.call_id] = i
            by_input.setdefault(input_digest(d.arguments), []).append(d.call_id)
    return ids, by_input


def _mismatch(hooked: Hooked, call: str, end: dict[str, Any]) -> None:
    verified = end.get("verified")
    if end.get("type") == "commit" and isinstance(verified, dict) and verified.get("post") is False:
        intents = hooked.calls.get(call, Call()).intents
        intent = next((x for x in intents if x.get("lsn") == end.get("ref")), {})
        expected, observed = intent.get("post"), end.get("post")
        hooked.mismatches.append(
            {"call": call, "target": target_of(intent), "expected": expected, "observed": observed}
        )


def _inline(intent: dict[str, Any], which: str) -> str | None:
    """A small image the intent carries (hash-checked) as text; None when not inline or binary."""
    try:
        data = intent_image(intent, "pre" if which == "pre" else "post")
    except BlobError:
        return None
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def _intent_for(call: Call, path: str) -> dict[str, Any] | None:
    """The file intent of ``call`` on ``path`` (the only one when the names differ in form)."""
    files = [x for x in call.intents if changes_file(x)]
    same = [x for x in files if path and (target_of(x) == path or path.endswith("/" + target_of(x)))]
    return same[0] if same else (files[0] if len(files) == 1 else None)


def _end_of(call: Call, intent: dict[str, Any]) -> dict[str, Any] | None:
    return next((e for e in call.ends if e.get("ref") == intent.get("lsn")), None)


def _overlay(d: ToolCall | ToolResult, call: Call) -> Detail:
    """The format's detail with the journal's hashes (a call) or its verification (a result)."""
    edit = d.edit
    intent = _intent_for(call, edit.path if edit is not None else "") if call.intents else None
    if isinstance(d, ToolCall):
        if intent is None:
            return d
        pre, post = hashes(intent)
        given = edit or FileEdit(path=target_of(intent), operation="create" if pre == "absent" else "update")
        update: dict[str, Any] = {"pre": pre, "post": post}
        if given.pre_text is None:
            update["pre_text"] = _inline(intent, "pre")
        if given.post_text is None:
            update["post_text"] = _inline(intent, "post")
        return d.model_copy(update={"edit": given.model_copy(update=update)})
    first = intent or (call.intents[0] if call.intents else {})
    end = _end_of(call, first)
    if end is None:
        return d.model_copy(update={"verification": "hook journal: intent recorded, no commit"})
    said = "hook journal: " + (verification(end) or ("failed: " + str(end.get("error", ""))[:300]))
    observed = end.get("post")
    if intent is not None and isinstance(observed, str):
        if observed != intent.get("post"):
            said += f" (expected {intent.get('post')}, observed {observed})"
        result_edit = (edit or FileEdit(path=target_of(intent))).model_copy(update={"post": observed})
        return d.model_copy(update={"verification": said, "edit": result_edit})
    return d.model_copy(update={"verification": said})


def _blobs(first: Any, store: BlobStore) -> Any:
    """A blob loader that asks the session's own first, then the hook journal's blob store."""

    def load(name: str) -> bytes | None:
        got = first(name)
        if got is not None:
            return got
        try:
            return store.get(name)
        except (BlobError, OSError, ValueError):
            return None

    return load
