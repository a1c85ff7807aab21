"""A real PostgreSQL server for the tests, from Debian's package, on 127.0.0.1 and a free port.

As root the server runs as the ``postgres`` user (initdb refuses root), in a folder of its own
under /tmp it can reach; it is stopped and removed when the tests are done.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """The URL of a fresh server's ``postgres`` database, user ``walkback``, no password."""
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if not initdb or not pg_ctl:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's server binaries are missing (./run test installs Debian's postgresql)")
        pytest.skip("PostgreSQL's server binaries are not installed (apt-get install postgresql)")
    top = Path(tempfile.mkdtemp(prefix="wb-pg-", dir="/tmp"))
    data = top / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:
        os.chmod(top, 0o755)
        shutil.chown(top, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "walkback", "--no-sync"], **run)  # type: ignore[call-overload]
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {top} -c fsync=off -c full_page_writes=off"
    subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(top / "log"), "-w", "start"], **run
    )  # type: ignore[call-overload]
    try:
        yield f"postgresql://walkback@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(top, ignore_errors=True)
