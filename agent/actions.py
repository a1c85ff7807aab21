"""What a planner may propose, and the one function that checks it.

A planner (scripted or a model) produces plain JSON objects. Nothing is executed until
:func:`parse_action` has turned the object into an :class:`Action`: a known tool, exactly the
arguments that tool takes with the right types, paths that stay inside the workspace. Anything
else raises :class:`PlanError`, which the harness journals (with the rejected output) instead of
acting on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from walkback.journal.errors import AgentError
from walkback.journal.record import FILE_TOOLS

TOOLS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "write_file": {"path": str, "content": str},
    "replace_symbol": {"path": str, "old": str, "new": str},
    "ensure_line": {"path": str, "line": str},
    "delete_file": {"path": str},
    "run_command": {"cmd": list, "cwd": str},
    "external_call": {"method": str, "url": str, "body": (dict, list, str, int, float, bool, type(None))},
    "spawn": {"children": list},
}
"""Every tool and the type of each of its arguments."""
OPTIONAL_ARGS = {"run_command": {"cwd"}, "external_call": {"body"}}
ACTION_KEYS = frozenset({"tool", "args", "check", "idempotent", "test", "reason"})
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
AGENT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PlanError(AgentError):
    """A planner proposed something that is not a valid action. It is journaled, never executed."""


@dataclass(frozen=True)
class ChildSpec:
    """One subagent of a ``spawn`` action: its id, task title and its own (already valid) steps."""

    agent: str
    task: str
    steps: tuple[Action, ...]

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "task": self.task, "steps": [s.to_json() for s in self.steps]}


@dataclass(frozen=True)
class Action:
    """One validated step: a tool, its arguments, and how to verify it."""

    tool: str
    args: dict[str, Any]
    check: str | None = None
    """Shell command run in the workspace after the effect; exit 0 is part of "verified"."""
    idempotent: bool = False
    """For ``run_command``: safe to run again after a crash (recovery may redo it)."""
    test: bool = False
    """For ``run_command``: the command is a test run; a ``test.result`` record is written."""
    reason: str | None = None
    children: tuple[ChildSpec, ...] = field(default=())
    """For ``spawn``: the subagents to fan out."""

    @property
    def effect(self) -> str:
        if self.tool in FILE_TOOLS:
            return "fs"
        return {"run_command": "command", "external_call": "external"}.get(self.tool, "agent")

    @property
    def target(self) -> str:
        if self.tool in FILE_TOOLS:
            return str(self.args["path"])
        if self.tool == "external_call":
            return str(self.args["url"])
        if self.tool == "run_command":
            return " ".join(self.args["cmd"])
        return ",".join(c.agent for c in self.children)

    def to_json(self) -> dict[str, Any]:
        """The action as planner output (what a ``plan`` record stores), parseable again."""
        out: dict[str, Any] = {"tool": self.tool, "args": self.args}
        if self.tool == "spawn":
            out["args"] = {"children": [c.to_json() for c in self.children]}
        for key in ("check", "reason"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        for key in ("idempotent", "test"):
            if getattr(self, key):
                out[key] = True
        return out


def check_path(path: str, where: str) -> str:
    """A workspace-relative path that cannot escape the workspace or touch ``.git``."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or "\\" in path or "\x00" in path:
        raise PlanError(f"{where}: path {path[:120]!r} must be relative to the workspace")
    if any(part in ("..", "") for part in path.split("/")) or p.parts[0] == ".git":
        raise PlanError(f"{where}: path {path[:120]!r} leaves the workspace or touches .git")
    return path


def parse_action(obj: Any, where: str = "planner output") -> Action:
    """Validate one planner output. Raises PlanError naming ``where`` and what is wrong."""
    if not isinstance(obj, dict):
        raise PlanError(f"{where}: expected a JSON object with `tool` and `args`, got {type(obj).__name__}")
    extra = set(obj) - ACTION_KEYS
    if extra:
        raise PlanError(f"{where}: unknown key(s) {sorted(extra)}")
    tool = obj.get("tool")
    if tool not in TOOLS:
        raise PlanError(f"{where}: unknown tool {str(tool)[:60]!r} (known: {', '.join(sorted(TOOLS))})")
    args = obj.get("args")
    if not isinstance(args, dict):
        raise PlanError(f"{where}: `args` of {tool} must be an object")
    spec = TOOLS[tool]
    optional = OPTIONAL_ARGS.get(tool, set())
    unknown = set(args) - set(spec)
    missing = set(spec) - set(args) - optional
    if unknown or missing:
        raise PlanError(
            f"{where}: {tool} takes {sorted(spec)}; unknown {sorted(unknown)}, missing {sorted(missing)}"
        )
    for name, typ in spec.items():
        if name in args and not isinstance(args[name], typ):
            raise PlanError(f"{where}: {tool}.{name} has the wrong type ({type(args[name]).__name__})")
    for key, typ in (("check", str), ("reason", str), ("idempotent", bool), ("test", bool)):
        if key in obj and not isinstance(obj[key], typ):
            raise PlanError(f"{where}: `{key}` must be {typ.__name__}")
    args = dict(args)
    children: tuple[ChildSpec, ...] = ()
    if tool in FILE_TOOLS:
        check_path(args["path"], where)
    if tool == "replace_symbol" and not (SYMBOL.match(args["old"]) and SYMBOL.match(args["new"])):
        raise PlanError(
            f"{where}: replace_symbol renames identifiers; {args['old']!r} -> {args['new']!r} is not"
        )
    if tool == "ensure_line" and ("\n" in args["line"] or not args["line"]):
        raise PlanError(f"{where}: ensure_line takes one non-empty line without a newline")
    if tool == "run_command":
        if not args["cmd"] or not all(isinstance(a, str) and a for a in args["cmd"]):
            raise PlanError(f"{where}: run_command.cmd must be a non-empty list of strings (argv)")
        args["cwd"] = args.get("cwd", ".")
        if args["cwd"] != ".":
            check_path(args["cwd"], where)
    if tool == "external_call":
        if args["method"].upper() not in METHODS:
            raise PlanError(f"{where}: external_call.method must be one of {sorted(METHODS)}")
        if not re.match(r"^https?://[^\s/]+", args["url"]):
            raise PlanError(f"{where}: external_call.url must be an http(s) URL, got {args['url'][:120]!r}")
        args["method"] = args["method"].upper()
        args.setdefault("body", None)
    if tool == "spawn":
        children = tuple(_child(c, f"{where}: child {i}") for i, c in enumerate(args["children"]))
        ids = [c.agent for c in children]
        if not children or len(set(ids)) != len(ids):
            raise PlanError(f"{where}: spawn needs at least one child and unique agent ids, got {ids}")
        args = {"children": [c.agent for c in children]}
    return Action(
        tool=tool,
        args=args,
        check=obj.get("check"),
        idempotent=bool(obj.get("idempotent", False)),
        test=bool(obj.get("test", False)),
        reason=obj.get("reason"),
        children=children,
    )


def _child(obj: Any, where: str) -> ChildSpec:
    if not isinstance(obj, dict) or set(obj) - {"agent", "task", "steps"}:
        raise PlanError(f"{where}: a child is an object with `agent`, `task`, `steps`")
    agent, task, steps = obj.get("agent"), obj.get("task"), obj.get("steps")
    if not isinstance(agent, str) or not AGENT_ID.match(agent) or agent == "main":
        raise PlanError(
            f"{where}: agent id {str(agent)[:40]!r} must match {AGENT_ID.pattern} and not be 'main'"
        )
    if not isinstance(task, str) or not isinstance(steps, list):
        raise PlanError(f"{where}: `task` must be a string and `steps` a list")
    return ChildSpec(
        agent, task, tuple(parse_action(s, f"{where} ({agent}) step {j}") for j, s in enumerate(steps))
    )
