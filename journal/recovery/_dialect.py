"""The three journal shapes recovery reads and appends to: v1, the seed lsn and seed seq dialects.

Reading turns an intent of any dialect into one :class:`Pending` (tool, args replayable without the
model, target, pre/post, effect); writing appends decisions, commits and fails in the journal's
own shape, so a seed journal stays a seed journal:

* v1 and lsn: ``recovery {ref, target, tool, finding, action, detail}``, ``commit {ref, post,
  verified, recovered}``, ``fail {ref, error}`` (the writer adds the envelope, or only ``lsn``);
* seq: a decision is ``{seq: <next>, type: "recovery", ref: <intent seq>, ...}`` without ``tool``
  (a record with ``tool`` is an intent there), and a commit is a result ``{seq: <intent seq>,
  result, status, recovered}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from walkback.journal.reader import is_seq_result
from walkback.journal.record import ABSENT, sha256_bytes
from walkback.journal.writer import JournalWriter

if TYPE_CHECKING:
    from ._cuts import Cut

FILE_TOOLS = frozenset({"write_file", "replace_symbol", "ensure_line", "delete_file"})
"""End-state file tools: applying one twice equals applying it once, so a redo is safe."""
ARG_KEYS = ("path", "content", "old", "new", "line", "cmd", "cwd", "method", "url", "body")
"""Tool arguments a seed lsn-dialect intent keeps at the top level."""
EFFECTS = frozenset({"fs", "command", "external"})


@dataclass
class Pending:
    """Something open in a journal: an intent, an approval request, or an intent lost in a torn tail."""

    kind: str
    """``intent``, ``approval`` or ``lost``."""
    lsn: int
    tool: str
    target: str
    effect: str = ""
    """``fs``, ``command``, ``external``, or empty when the journal does not say and it cannot be told."""
    pre: str | None = None
    post: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    key: str | None = None
    """Idempotency key of an external effect."""
    idempotent: bool = False
    check: str | None = None
    step: int | None = None
    ref: int | None = None
    """For a lost intent: lsn of the ``journal.recovered`` record of the repair that cut it."""
    record: dict[str, Any] = field(default_factory=dict)
    """The intent as journaled (its inline images, :func:`journal.images.intent_image`)."""


def kind_of(d: dict[str, Any], dialect: str) -> str:
    """The record type, with the seq dialect's untyped intents and results named."""
    t = d.get("type")
    if dialect == "seq":
        if is_seq_result(d):
            return "result"
        if isinstance(t, str):
            return t
        return "intent" if "tool" in d else "other"
    return t if isinstance(t, str) else "other"


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def target_of(d: dict[str, Any], args: dict[str, Any]) -> str:
    """Where the intent acts: ``target``, ``file`` or ``path``, else an argument naming it."""
    for key in ("target", "file", "path"):
        if isinstance(d.get(key), str):
            return str(d[key])
    for key in ("path", "url"):
        if isinstance(args.get(key), str):
            return str(args[key])
    cmd = args.get("cmd")
    if isinstance(cmd, list):
        return " ".join(str(c) for c in cmd)
    return ""


def _effect(d: dict[str, Any], tool: str, args: dict[str, Any], key: str | None) -> str:
    e = d.get("effect")
    if e in EFFECTS:
        return str(e)
    if tool in FILE_TOOLS or isinstance(d.get("pre"), str) or isinstance(d.get("post"), str):
        return "fs"
    if tool == "run_command" or isinstance(args.get("cmd"), list):
        return "command"
    if key or tool == "external_call" or isinstance(args.get("url"), str):
        return "external"
    return ""


def pending_intent(lsn: int, d: dict[str, Any]) -> Pending:
    """Normalise an intent of any dialect."""
    tool = str(d.get("tool") or "")
    raw = d.get("args")
    args: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {k: d[k] for k in ARG_KEYS if k in d}
    target = target_of(d, args)
    if tool in FILE_TOOLS and "path" not in args and target:
        args["path"] = target
    key = _str(d.get("idempotency_key"))
    effect = _effect(d, tool, args, key)
    post = _str(d.get("post"))
    if post is None and tool == "write_file" and isinstance(args.get("content"), str):
        post = sha256_bytes(args["content"].encode())
    elif post is None and tool == "delete_file":
        post = ABSENT
    step = d.get("step")
    return Pending(
        kind="intent",
        lsn=lsn,
        tool=tool,
        target=target,
        effect=effect,
        pre=_str(d.get("pre")),
        post=post,
        args=args,
        key=key,
        idempotent=d.get("idempotent") is True,
        check=_str(d.get("check")),
        step=step if isinstance(step, int) else None,
        record=d,
    )


def pending_approval(lsn: int, d: dict[str, Any]) -> Pending:
    """An ``approval.request`` still waiting for its decision."""
    action = d.get("action")
    step = d.get("step")
    return Pending(
        kind="approval",
        lsn=lsn,
        tool=str(d.get("tool") or (action.get("tool") if isinstance(action, dict) else "") or ""),
        target=str(d.get("target") or ""),
        step=step if isinstance(step, int) else None,
    )


class Appender:
    """Appends recovery's records to one journal in its dialect (the writer does the fsyncs).

    In the seq dialect the writer turns ``commit``/``fail`` into that dialect's result
    ``{seq: <intent seq>, status, ...}``; a decision there carries no ``tool`` (a record with one
    is an intent in that dialect).
    """

    def __init__(self, writer: JournalWriter, dialect: str) -> None:
        self.writer = writer
        self.dialect = dialect

    @property
    def next_lsn(self) -> int:
        return self.writer.next_lsn

    def decision(self, p: Pending, finding: str, action: str, detail: str) -> int:
        """The ``recovery`` record, fsynced before anything is done about ``p``."""
        fields: dict[str, Any] = {"target": p.target, "tool": p.tool}
        if self.dialect == "seq":
            del fields["tool"]
        fields.update(finding=finding, action=action, detail=detail)
        if p.kind == "lost":
            assert p.ref is not None
            return self.writer.append("recovery", ref=p.ref, lost_lsn=p.lsn, **fields)
        return self.writer.append("recovery", ref=p.lsn, **fields)

    def commit(self, p: Pending, *, post: str | None, verified: dict[str, Any], result: Any = None) -> int:
        """Close ``p`` as done and verified by recovery (``recovered: true``)."""
        fields: dict[str, Any] = {}
        if self.dialect != "seq":
            fields = {"post": post, "verified": verified}
        if result is not None:
            fields["result"] = result
        return self.writer.append("commit", ref=p.lsn, recovered=True, **fields)

    def fail(self, p: Pending, error: str, result: Any = None) -> int:
        """Close ``p`` as failed (its verification failed after recovery acted)."""
        fields: dict[str, Any] = {"error": error, "recovered": True}
        if result is not None:
            fields["result"] = result
        return self.writer.append("fail", ref=p.lsn, **fields)

    def record_cut(self, cut: Cut) -> int:
        """The ``journal.recovered`` a repair killed before its record would have written."""
        return self.writer.append(
            "journal.recovered",
            truncated_bytes=len(cut.dropped),
            dropped_sha256=cut.dropped_sha256,
            orphan_lines=list(cut.lines),
            last_good_lsn=cut.last_good_lsn,
            broken_copy=cut.copy,
        )
