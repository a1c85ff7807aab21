"""The pull-request summary (``walkback export markdown``): what the agent did, as a GitHub comment.

Task, agents, outcome, the files changed (lines added and removed, post hash), the commands with
their exit status, approvals, failures, the crash and each recovery decision, the verification
line (signer, Merkle root) and how to open the HTML replay. It is rendered from the session as its
signed bundle carries it, so it is redacted exactly as the bundle is. Every string from the
session is escaped (a model wrote it: it must stay text in GitHub-flavoured markdown), and the
whole stays within GitHub's comment limit: the longest lists are cut first, and the cut is said.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.exporters.base import Option, atomic_output
from walkback.exporters.bundle import NO_DEFAULT_REDACTION, REDACT
from walkback.timeline.changes import change_view
from walkback.timeline.details import Recovery, TestResult, ToolCall, ToolResult
from walkback.timeline.kinds import KIND_INDEX, PLACEHOLDER
from walkback.timeline.query import columns, file_rows
from walkback.timeline.session import Session
from walkback.timeline.step_card import detail_of
from walkback.timeline.story import agent_stories, crashes
from walkback.timeline.views import approvals, file_change

__all__ = ["EXPORTER", "LIMIT", "MarkdownExporter", "escape", "summary_markdown"]

LIMIT = 65_536
"""GitHub's limit on a comment's length, in characters."""
_ACTIVE = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


def escape(text: Any, limit: int = 160) -> str:
    """``text`` as inert markdown on one line: every active character backslash-escaped, clipped."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return _ACTIVE.sub(r"\\\1", s)


def code(text: Any) -> str:
    """A short value (a hash, a name) as a code span; backticks in it are dropped."""
    s = " ".join(str(text).split()).replace("`", "'")[:80]
    return "`" + s.replace("|", "\\|") + "`" if s else ""  # GFM reads \| as | even in a code span


@dataclass
class Table:
    """One section's table: its title, header and rows (each already escaped), some maybe cut."""

    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    keep: int = 10**9
    empty: str = "none"

    def text(self) -> str:
        out = [f"### {self.title}", ""]
        if not self.rows:
            return "\n".join([*out, f"_{self.empty}_", ""])
        out += ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        out += ["| " + " | ".join(r) + " |" for r in self.rows[: self.keep]]
        if len(self.rows) > self.keep:
            out.append(f"\n_… and {len(self.rows) - self.keep} more (cut to fit a comment)_")
        return "\n".join([*out, ""])


def _plus_minus(session: Session, i: int, history: Any) -> tuple[int, int] | None:
    try:
        view = change_view(session, i, history=history)
    except (OSError, ValueError):
        return None
    if view is None or view.binary or view.too_large or (view.pre_text is None and view.post_text is None):
        return None
    pre = (view.pre_text or b"").decode("utf-8", "replace").splitlines()
    post = (view.post_text or b"").decode("utf-8", "replace").splitlines()
    added = removed = 0
    for line in difflib.unified_diff(pre, post, n=0, lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _tables(session: Session) -> list[Table]:  # noqa: C901 - one loop over the events fills every table
    s = session
    stories = {x.agent: x for x in agent_stories(s)}
    agents = Table("Agents", ["agent", "parent", "events", "outcome"])
    for a in s.agents.values():
        story = stories[a.id].line if a.id in stories else a.outcome
        agents.rows.append([escape(a.label or a.id), escape(a.parent or ""), str(a.events), escape(story)])
    files: dict[str, list[Any]] = {}
    commands = Table("Commands", ["step", "command", "exit", "status"], empty="no command was run")
    failures = Table("Failures", ["step", "what", "error"], empty="nothing failed")
    decisions = Table("Recovery decisions", ["step", "intent", "finding", "decision", "why"], empty="none")
    history = file_rows(s)
    c = columns(s)
    for i in range(len(s)):
        if c.flags[i] & PLACEHOLDER or c.kind[i] not in _KINDS:
            continue
        ev = s.event(i)
        d = detail_of(s, i)
        if isinstance(d, ToolCall) and d.edit is not None and ev.target:
            f = files.setdefault(ev.target, [0, 0, 0, i])
            pm = _plus_minus(s, i, history.get(ev.target))
            if pm is not None:
                f[0], f[1] = f[0] + pm[0], f[1] + pm[1]
            f[2], f[3] = f[2] + 1, i
        elif isinstance(d, ToolCall) and d.command:
            done = s.completion_of(i)
            r = detail_of(s, done) if done is not None else None
            exit_code = r.exit_code if isinstance(r, ToolResult) else None
            status = s.event(done).status if done is not None else "pending"
            commands.rows.append(
                [f"{i + 1}", code(d.command[:80]) or escape(d.command), _exit(exit_code), status]
            )
        elif isinstance(d, TestResult) and d.command:
            commands.rows.append([f"{i + 1}", code(d.command), _exit(d.exit_code), _passed(d.passed)])
        elif isinstance(d, Recovery) and d.finding:
            decisions.rows.append(
                [
                    f"{i + 1}",
                    f"{ev.ref + 1}" if ev.ref is not None else "",
                    escape(d.finding),
                    escape(d.action),
                    escape(d.detail),
                ]
            )
        if ev.status in ("failed", "denied") and ev.kind != "approval_decision":
            error = d.error if isinstance(d, ToolResult) else ""
            failures.rows.append(
                [f"{i + 1}", escape(" ".join(x for x in (ev.tool, ev.target) if x) or ev.kind), escape(error)]
            )
    changed = Table(
        "Files changed", ["file", "+/-", "changes", "post hash", "last step"], empty="no file was changed"
    )
    for path, (added, removed, n, last) in files.items():
        fc = file_change(s, last)
        post = fc.post if fc is not None else None
        changed.rows.append(
            [escape(path), f"+{added} −{removed}", str(n), code(post[:19] if post else "—"), str(last + 1)]
        )
    asks = Table(
        "Approvals", ["step", "action", "decision", "approver", "reason"], empty="no approval was asked"
    )
    for x in approvals(s):
        asks.rows.append(
            [
                f"{x.request + 1}",
                escape(" ".join(p for p in (x.tool, x.target) if p)),
                escape(x.decision or "unanswered") + (" (inferred)" if x.inferred else ""),
                escape(x.approver or ""),
                escape(x.reason or ""),
            ]
        )
    return [agents, changed, commands, asks, failures, decisions]


_KINDS = frozenset(
    KIND_INDEX[k] for k in ("tool_call", "tool_result", "test_result", "recovery", "approval_request")
)


def _exit(code_: int | None) -> str:
    return "—" if code_ is None else str(code_)


def _passed(passed: bool | None) -> str:
    return "passed" if passed else "failed" if passed is False else "—"


def summary_markdown(session: Session, verification: str, replay: str, limit: int = LIMIT) -> str:
    """The comment for ``session``; ``verification`` is the signer/Merkle line, ``replay`` the name
    of the HTML replay file it goes with."""
    s = session
    status = s.status + (" · recovered" if s.recovered else "")
    head = [
        f"## walkback: {escape(s.task or 'an agent session', 300)}",
        "",
        f"**Outcome:** {escape(status)} · {escape(s.integrity.badge)} · {len(s):,} events · "
        f"{len(s.agents)} agent{'s' if len(s.agents) != 1 else ''} · read from {escape(s.format)}",
        "",
    ]
    crash = ["### Crash and recovery", ""]
    for x in crashes(s):
        crash.append(f"- after step {x.after + 1}: {escape(x.text(s), 400)}")
    if len(crash) == 2:
        crash.append("_no crash_")
    brief = s.brief or next(
        (d.brief for i in range(len(s)) if isinstance(d := _recovery(s, i), Recovery) and d.brief), ""
    )
    if brief:
        crash += [
            "",
            "Resume brief the agent continued from:",
            "",
            "```text",
            brief[:4000].replace("```", "'''"),
            "```",
        ]
    tail = [
        "",
        "### Verification",
        "",
        f"{escape(verification, 400)}. Check it offline: `walkback verify {replay} --key PUB` "
        "(or `--allowed-signers FILE`).",
        "",
        f"**Open the replay:** download `{replay}` and open it in a browser: one file, no server, no "
        f"network; keys j/k step, g jumps, `#step=N` links a step. Produced by walkback.",
        "",
    ]
    tables = _tables(s)
    while True:
        body = [t.text() for t in tables]
        text = "\n".join([*head, *body[:2], *crash, "", *body[2:], *tail])
        cut = [t for t in tables if len(t.rows) > t.keep]
        note = (
            "\n_This summary was cut to fit GitHub's 65,536-character comment limit: "
            + ", ".join(f"{t.title.lower()} ({len(t.rows) - t.keep} rows)" for t in cut)
            + f" are left out; the replay `{replay}` has them all._\n"
            if cut
            else ""
        )
        if len(text) + len(note) <= limit:
            return text + note
        longest = max(tables, key=lambda t: min(len(t.rows), t.keep))
        if min(len(longest.rows), longest.keep) == 0:
            return (text + note)[: limit - 40] + "\n\n_(cut at the comment limit)_\n"
        longest.keep = min(len(longest.rows), longest.keep) // 2


def _recovery(session: Session, i: int) -> Any:
    return detail_of(session, i) if session.event(i).kind == "recovery" else None


class MarkdownExporter:
    """``walkback export markdown``: a pull-request comment summarising the session (GitHub markdown)."""

    name = "markdown"
    suffix = ".md"
    extra = None
    redacts = True
    """Rendered from its bundle, which redacts (``walkback export`` hands it the rules)."""
    options: tuple[Option, ...] = (
        Option(
            "key",
            "Ed25519 private key: the summary names the signer and the Merkle root of the bundle.",
            metavar="KEY",
            unset="unsigned: no --key given; the summary says the bundle is unsigned",
        ),
        Option("html", "The HTML replay this summary goes with (named in how to open it).", metavar="FILE"),
        REDACT,
        NO_DEFAULT_REDACTION,
    )

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        return self._write(session, out, options)

    def export_source(self, path: Path, out: Path, **options: Any) -> Path:
        return self._write(Path(path), out, options)

    def _write(self, source: Path | Session, out: Path, options: dict[str, Any]) -> Path:
        from walkback.exporters.handoff import bundled

        b = bundled(source, {k: v for k, v in options.items() if k != "html"})
        replay = Path(options.get("html") or "review.html").name
        text = summary_markdown(b.session, b.line(), replay)
        with atomic_output(Path(out)) as f:
            f.write(text.encode("utf-8"))
        return Path(out)


EXPORTER = MarkdownExporter()
