"""The side effects recovery may perform: write an image, run a command, reissue an HTTP call.

File writes go through :mod:`journal.fileops` (temp file, fsync, rename, directory fsync) so the
power-loss tests can record them like the agent's own writes.
"""

from __future__ import annotations

import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson

from journal.fileops import OS, FileOps, atomic_write

from ._images import Image, resolve_target

TAIL = 2000
COMMAND_TIMEOUT = 600.0
HTTP_TIMEOUT = 30.0
TMP_SUFFIX = ".wb-tmp"
"""The temp-file suffix of :func:`journal.fileops.atomic_write` (a crash can leave one behind)."""


def put_image(path: Path, img: Image, *, ops: FileOps = OS) -> None:
    """Make ``path`` hold ``img`` durably: atomic write, or unlink (and fsync the directory)."""
    if img.data is None:
        if path.exists():
            ops.unlink(path)
            ops.fsync_dir(path.parent)
        return
    ops.mkdir(path.parent)
    atomic_write(path, img.data, ops=ops, tmp_suffix=TMP_SUFFIX)


def drop_stale_temp(path: Path, *, ops: FileOps = OS) -> None:
    """Remove the temp file a crash mid-write may have left beside ``path``."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    if tmp.is_file() and not tmp.is_symlink():
        ops.unlink(tmp)
        ops.fsync_dir(path.parent)


def _tail(data: bytes) -> str:
    return data[-TAIL:].decode("utf-8", errors="replace")


def _env() -> dict[str, str]:
    """The environment minus the crash switches: a subprocess must not die of recovery's failpoint."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK_FAILPOINT")}


def _run(cmd: list[str] | str, cwd: Path, *, shell: bool) -> tuple[int, str]:
    try:
        out = subprocess.run(
            cmd,
            cwd=cwd,
            shell=shell,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=_env(),
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, str(e)
    return out.returncode, _tail(out.stdout)


def run_command(workspace: Path, args: dict[str, Any]) -> tuple[int, str]:
    """Run an intent's ``cmd`` (argv, never a shell) in the workspace; return exit code and output tail."""
    cmd = args.get("cmd")
    cwd_arg = args.get("cwd", ".")
    cwd = workspace if cwd_arg in (".", "", None) else resolve_target(workspace, str(cwd_arg))
    if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) for c in cmd) or cwd is None:
        return 127, "not a runnable command (argv list inside the workspace expected)"
    return _run(cmd, cwd, shell=False)


def run_check(workspace: Path, check: str) -> tuple[int, str]:
    """Run an intent's ``check`` (a shell command string, as the agent runs it) in the workspace."""
    return _run(check, workspace, shell=True)


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def reissue(args: dict[str, Any], key: str) -> dict[str, Any]:
    """Send the call again with the same ``Idempotency-Key``; return ``{status, body_tail, replayed}``.

    Raises:
        OSError: the service could not be reached (the call stays in doubt).
    """
    url, method = str(args["url"]), str(args["method"]).upper()
    if not url.startswith(("http://", "https://")):
        raise OSError(f"not an http(s) URL: {url[:80]!r}")
    body = args.get("body")
    data = None if body is None else orjson.dumps(body)
    headers = {"Idempotency-Key": key, "Content-Type": "application/json", "User-Agent": "walkback-recover"}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _OPENER.open(req, timeout=HTTP_TIMEOUT) as r:
            status, body_bytes, replayed = int(r.status), r.read(), r.headers.get("Idempotent-Replayed")
    except urllib.error.HTTPError as e:
        status, body_bytes, replayed = int(e.code), e.read(), e.headers.get("Idempotent-Replayed")
    except urllib.error.URLError as e:
        raise OSError(str(e.reason)) from None
    return {"status": status, "body_tail": _tail(body_bytes), "replayed": replayed == "true"}
