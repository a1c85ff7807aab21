"""The side effects recovery may perform: write an image, run a command, reissue an HTTP call.

File writes go through :mod:`journal.fileops` (temp file, fsync, rename, directory fsync) so the
power-loss tests can record them like the agent's own writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from walkback.journal import effects
from walkback.journal.fileops import OS, FileOps, atomic_write, confined

from ._images import Image, resolve_target

COMMAND_TIMEOUT = 600.0
HTTP_TIMEOUT = 30.0


def put_image(path: Path, img: Image, *, root: Path, ops: FileOps = OS) -> None:
    """Make ``path`` hold ``img`` durably: atomic write, or unlink (and fsync the directory).

    Raises:
        OutsideWorkspace: ``path`` resolves outside the workspace ``root`` (nothing is touched).
    """
    path = confined(root, path)
    if img.data is None:
        if path.exists():
            ops.unlink(path)
            ops.fsync_dir(path.parent)
        return
    ops.mkdir(path.parent)
    atomic_write(path, img.data, ops=ops, root=root)


def run_command(workspace: Path, args: dict[str, Any]) -> tuple[int, str]:
    """Run an intent's ``cmd`` (argv, never a shell) in the workspace; return exit code and output tail."""
    cmd = args.get("cmd")
    cwd_arg = args.get("cwd", ".")
    cwd = workspace if cwd_arg in (".", "", None) else resolve_target(workspace, str(cwd_arg))
    if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) for c in cmd) or cwd is None:
        return 127, "not a runnable command (argv list inside the workspace expected)"
    r = effects.run(cmd, cwd, timeout=COMMAND_TIMEOUT)
    return r.exit_code, r.output_tail


def run_check(workspace: Path, check: str) -> tuple[int, str]:
    """Run an intent's ``check`` (a shell command string, as the agent runs it) in the workspace."""
    r = effects.run(check, workspace, shell=True, timeout=COMMAND_TIMEOUT)
    return r.exit_code, r.output_tail


def reissue(tool: str, args: dict[str, Any], key: str) -> dict[str, Any]:
    """Send the call again with the same ``Idempotency-Key``; return ``{status, body_tail, replayed}``.

    Raises:
        OSError: the service could not be reached, or the intent is not an HTTP call (it stays in
            doubt).
    """
    req = effects.http_request(tool, args)
    if req is None:
        raise OSError(f"{tool} is not an HTTP call walkback can send")
    r = effects.call(req.method, req.url, req.body, key, timeout=HTTP_TIMEOUT, agent="walkback-recover")
    return r.to_json()
