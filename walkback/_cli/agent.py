"""``walkback agent run|resume``: drive the journaled agent loop from the terminal.

The only interactive part lives here: the approver that prompts a human (the library takes any
callback). Progress lines go to stderr; the final ``<run dir>: <status>`` line to stdout.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .common import handle_errors

F = TypeVar("F", bound=Callable[..., Any])


def approval_options(fn: F) -> F:
    """``--approve-all`` / ``--deny-all`` / ``--policy FILE`` (else: ask on the terminal)."""
    fn = click.option(
        "--policy",
        "policy_file",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Policy file: which actions need approval, and standing answers.",
    )(fn)
    fn = click.option("--deny-all", is_flag=True, help="Deny every approval request.")(fn)
    fn = click.option("--approve-all", is_flag=True, help="Approve every approval request.")(fn)
    return fn


def _mode(approve_all: bool, deny_all: bool) -> str | None:
    if approve_all and deny_all:
        raise click.UsageError("--approve-all and --deny-all exclude each other")
    return "approve-all" if approve_all else "deny-all" if deny_all else None


def prompt_approver(req: Any) -> Any:
    """Ask the human at the terminal; with no terminal, nobody can answer (the run waits)."""
    from walkback.agent.approvals import Decision

    if not sys.stdin.isatty():
        return None
    click.echo(f"\napproval needed — {req.agent}, step {req.step} (request lsn {req.lsn})", err=True)
    click.echo(f"  {req.tool} {req.target}\n  why: {req.reason}", err=True)
    click.echo(f"  action: {json.dumps(req.action)[:400]}", err=True)
    ok = click.confirm("approve?", default=False, err=True)
    reason = click.prompt("reason (optional)", default="", show_default=False, err=True)
    return Decision("approve" if ok else "deny", f"prompt:{getpass.getuser()}", reason)


def approver_for(mode: str | None) -> Any:
    from walkback.agent.approvals import APPROVERS

    return APPROVERS[mode] if mode else prompt_approver


def progress(line: str) -> None:
    click.echo(line, err=True)


def _finish(result: Any) -> None:
    click.echo(f"{result.run_dir}: {result.status}")
    if result.status != "completed":
        sys.exit(1)


@click.group()
def agent() -> None:
    """Run the journaled agent loop (intent -> apply -> verify -> commit) and resume it after a crash."""


@agent.command("run")
@click.argument("task")
@click.option(
    "--workspace",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The git repository the agent edits.",
)
@click.option(
    "--run-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run directory (default $WALKBACK_HOME/runs/<run> or ~/.walkback/runs/<run>).",
)
@approval_options
@click.option(
    "--service", "service_url", help="Base URL of the external service the task calls (${service})."
)
@click.option("--setup", is_flag=True, help="First create the task's scratch repository in --workspace.")
@click.option("--planner", type=click.Choice(["scripted", "openai"]), default="scripted", show_default=True)
@click.option(
    "--base-url", help="OpenAI-compatible endpoint (with --planner openai), e.g. http://127.0.0.1:8000/v1."
)
@click.option("--model", help="Model name (with --planner openai).")
@handle_errors
def run(
    task: str,
    workspace: Path,
    run_dir: Path | None,
    approve_all: bool,
    deny_all: bool,
    policy_file: Path | None,
    service_url: str | None,
    setup: bool,
    planner: str,
    base_url: str | None,
    model: str | None,
) -> None:
    """Run TASK (a task file, or a shipped task: rename, multi_agent, release) in --workspace."""
    from walkback.agent.runs import PlannerOptions, start_run
    from walkback.agent.task import load_task, make_workspace

    mode = _mode(approve_all, deny_all)
    if setup:
        make_workspace(load_task(task), workspace)
    result = start_run(
        task,
        workspace,
        approver=approver_for(mode),
        run_dir=run_dir,
        policy_file=policy_file,
        approvals=mode,
        service_url=service_url,
        on_event=progress,
        planner=PlannerOptions(planner, base_url, model, os.environ.get("OPENAI_API_KEY")),
    )
    _finish(result)


@agent.command("resume")
@click.argument("run")
@approval_options
@click.option("--service", "service_url", help="New base URL of the external service (steps not yet run).")
@handle_errors
def resume(
    run: str, approve_all: bool, deny_all: bool, policy_file: Path | None, service_url: str | None
) -> None:
    """Recover RUN (a run directory or id), ask again what was never answered, and finish it."""
    from walkback.agent.runs import resume_run

    mode = _mode(approve_all, deny_all)
    result = resume_run(
        run,
        approver=approver_for(mode),
        policy_file=policy_file,
        service_url=service_url,
        api_key=os.environ.get("OPENAI_API_KEY"),
        on_event=progress,
    )
    _finish(result)


@agent.command("child", hidden=True)
@click.argument("child_dir", type=click.Path(file_okay=False, path_type=Path))
@handle_errors
def child(child_dir: Path) -> None:
    """Run or resume one subagent (started by its parent's fan-out)."""
    from walkback.agent.runs import run_child

    _finish(run_child(child_dir, on_event=progress))
