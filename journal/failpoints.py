"""Named crash points for the torture tests (etcd gofail style).

``WALKBACK_FAILPOINT=name[:nth]`` makes the process SIGKILL itself the nth time (default 1st) it
reaches ``failpoint(name)``. Unset, a failpoint is one dict lookup. Names in use are listed in
docs/journal-format.md ("Failpoints").
"""

from __future__ import annotations

import os
import signal

_armed: tuple[str, int] | None = None
_hits: dict[str, int] = {}


def _arm() -> tuple[str, int] | None:
    spec = os.environ.get("WALKBACK_FAILPOINT", "")
    if not spec:
        return None
    name, _, nth = spec.partition(":")
    return name, int(nth or 1)


_armed = _arm()


def failpoint(name: str) -> None:
    """Kill this process with SIGKILL if ``name`` is the armed failpoint and its count is reached."""
    if _armed is None or _armed[0] != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] == _armed[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def active() -> bool:
    """True when any failpoint is armed (hot paths skip building failpoint names otherwise)."""
    return _armed is not None


def armed(name: str) -> bool:
    """True when ``name`` is the armed failpoint (used to split a write only when a test asks)."""
    return _armed is not None and _armed[0] == name


def rearm() -> None:
    """Re-read the environment (for tests that set the variable after import)."""
    global _armed
    _armed = _arm()
    _hits.clear()
