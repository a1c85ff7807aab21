"""Task files: what the scripted planner runs, and the scratch repository a task needs.

A task file is JSON::

    {"title": "...", "description": "...",
     "setup": {"files": [{"path": "users/handler_{n}.py", "content": "...", "repeat": 39}]},
     "policy": {"rules": [{"tool": "external_call", "approval": "required"}]},
     "checkpoint_every": 10,
     "steps": [{"for_each": "users/*.py", "tool": "replace_symbol",
                "args": {"path": "{path}", "old": "getUserById", "new": "fetchUser"}}, ...]}

``{n}`` in a repeated setup file is its number (01, 02, ...). ``{path}`` in a ``for_each`` step is
each file matching the glob in the workspace, sorted, when the plan is made. ``${python}`` and
``${service}`` anywhere in the steps are the interpreter and the demo service's base URL.
Shipped tasks live in ``agent/tasks/`` and may be named without their path (``rename``).
"""

from __future__ import annotations

import json
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.journal.errors import AgentError
from walkback.journal.fileops import naming

from .actions import check_path
from .gitutil import git

TASKS_DIR = Path(__file__).resolve().parent / "tasks"


@dataclass(frozen=True)
class Task:
    """A parsed task file."""

    path: Path
    title: str
    steps: list[dict[str, Any]]
    """Raw steps, before ``for_each`` expansion and placeholder substitution."""
    description: str = ""
    setup: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, Any] = field(default_factory=dict)
    checkpoint_every: int = 0
    """Checkpoint after every N steps (0: only after fan-outs and at the end)."""


def shipped_tasks() -> list[str]:
    return sorted(p.stem for p in TASKS_DIR.glob("*.json"))


def resolve_task(name: str | Path) -> Path:
    """A task file path, or the name of a shipped task (``rename``, ``multi_agent``, ``release``)."""
    p = Path(name)
    if p.is_file():
        return p.resolve()
    shipped = TASKS_DIR / f"{name}.json"
    if shipped.is_file():
        return shipped
    raise AgentError(f"no task file {str(name)!r} (shipped tasks: {', '.join(shipped_tasks())})")


def load_task(name: str | Path) -> Task:
    """Read and check a task file. Errors name the file and line."""
    path = resolve_task(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise AgentError(f"task file is not valid JSON: {e.msg}", path=path, line=e.lineno) from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("title"), str)
        or not isinstance(data.get("steps"), list)
    ):
        raise AgentError("a task file is an object with a string `title` and a list `steps`", path=path)
    every = data.get("checkpoint_every", 0)
    if not isinstance(every, int) or every < 0:
        raise AgentError("`checkpoint_every` must be a non-negative integer", path=path)
    return Task(
        path=path,
        title=data["title"],
        steps=data["steps"],
        description=str(data.get("description", "")),
        setup=data.get("setup") or {},
        policy=data.get("policy") or {},
        checkpoint_every=every,
    )


def expand_steps(task: Task, workspace: Path, values: dict[str, str]) -> list[Any]:
    """The concrete plan: ``for_each`` globs expanded against the workspace, placeholders filled.

    The result is raw planner output; the planner validates each step with ``parse_action``.
    """
    values = {"python": sys.executable, **values}
    out: list[Any] = []
    for i, step in enumerate(task.steps):
        if isinstance(step, dict) and "for_each" in step:
            pattern = step["for_each"]
            body = {k: v for k, v in step.items() if k != "for_each"}
            matches = sorted(
                p.relative_to(workspace).as_posix() for p in workspace.glob(str(pattern)) if p.is_file()
            )
            if not matches:
                raise AgentError(
                    f"step {i}: for_each {pattern!r} matches no file in {workspace}", path=task.path
                )
            out += [_fill(body, values, {"{path}": m}, task.path, i) for m in matches]
        else:
            out.append(_fill(step, values, {}, task.path, i))
    return out


def _fill(obj: Any, values: dict[str, str], literal: dict[str, str], path: Path, step: int) -> Any:
    if isinstance(obj, str):
        for k, v in literal.items():
            obj = obj.replace(k, v)
        try:
            return string.Template(obj).substitute(values)
        except KeyError as e:
            raise AgentError(f"step {step} needs ${{{e.args[0]}}} (pass --service URL?)", path=path) from None
        except ValueError:
            return obj
    if isinstance(obj, list):
        return [_fill(v, values, literal, path, step) for v in obj]
    if isinstance(obj, dict):
        return {k: _fill(v, values, literal, path, step) for k, v in obj.items()}
    return obj


def make_workspace(task: Task, dest: Path) -> str:
    """Create the scratch git repository a task describes in ``setup``; return its commit sha."""
    if dest.exists() and any(dest.iterdir()):
        raise AgentError("the scratch workspace must be a new or empty directory", path=dest)
    files = task.setup.get("files")
    if not isinstance(files, list) or not files:
        raise AgentError("this task has no `setup.files` to make a workspace from", path=task.path)
    dest.mkdir(parents=True, exist_ok=True)
    for i, spec in enumerate(files):
        if (
            not isinstance(spec, dict)
            or not isinstance(spec.get("path"), str)
            or not isinstance(spec.get("content"), str)
        ):
            raise AgentError(f"setup.files[{i}] needs string `path` and `content`", path=task.path)
        repeat = spec.get("repeat")
        numbers = [f"{n:02d}" for n in range(1, int(repeat) + 1)] if repeat else [""]
        for n in numbers:
            rel = check_path(spec["path"].replace("{n}", n), f"{task.path}: setup.files[{i}]")
            target = dest / rel
            text = spec["content"].replace("{n}", n) if n else spec["content"]
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            except OSError as e:
                raise naming(e, target) from None
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", f"scratch repository for: {task.title}")
    return git(dest, "rev-parse", "HEAD")
