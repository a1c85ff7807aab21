"""The hook command's cost per call against a bare interpreter start (issue 26: median <= 2.0x).

Each side is a fresh process, as the agent starts one per hook: the baseline is ``python -c pass``
with the same interpreter; the hook is ``python -m walkback.agent.hooks claude-code`` reading a
Claude Code payload on stdin. Measured: a PreToolUse Edit (the intent with the pre-image and the
expected post hash, fsynced), its PostToolUse (the commit, hash checked), and, for the record and
a PreToolUse Bash (the intent plus a git snapshot of a small repository: two git processes, ``add
-A`` into a temporary index and ``write-tree``). The sides interleave (A B A B ...); the ratio is
of medians, as the goal says. Both sides run with their bytecode cached, as an installed package's
is (``PYTHONDONTWRITEBYTECODE`` is dropped for them and one warm-up call writes it): without it
each hook call compiles its 45 modules again, 20 ms.

``--python`` measures another interpreter's install (a venv with the wheel installed): a
development venv's editable install adds its import finder to every start, the bare one included
(about 17 ms here), which flatters the ratio; a wheel install's bare start has no such cost.

    python bench/hooks.py [--rounds 40] [--python VENV/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import cpu_seconds, load_note, report, scratch_dir  # noqa: E402

GOAL = 2.0


def _payload(ws: Path, event: str, tool: str, args: dict[str, object], n: int) -> bytes:
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(ws / "t.jsonl"),
            "cwd": str(ws),
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": args,
            "tool_use_id": f"toolu_{n}",
        }
    ).encode()


def _run(cmd: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of ``cmd`` (in the scratch folder:
    the repository's own ``walkback/`` folder must not shadow an installed package)."""
    cpu, t = cpu_seconds(), time.perf_counter()
    p = subprocess.run(
        cmd,
        input=data,
        env=env,
        cwd=os.path.dirname(env["WALKBACK_HOME"]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    took = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-300:]}")
    return took, cpu_seconds() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--python", default=sys.executable, help="the interpreter to measure [this one]")
    args = ap.parse_args()
    with scratch_dir("wb-bench-hooks-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["WALKBACK_HOME"] = str(Path(tmp) / "home")
        for i in range(20):
            (ws / f"f{i}.py").write_text(f"value = {i}\n" * 50)
        ident = ["-c", "user.name=b", "-c", "user.email=b@b.invalid"]
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        subprocess.run(["git", "add", "."], cwd=ws, check=True)
        subprocess.run(["git", *ident, "commit", "-qm", "bench"], cwd=ws, check=True)
        bare = [args.python, "-c", "pass"]
        hook = [args.python, "-m", "walkback.agent.hooks", "claude-code"]
        edit = {
            "file_path": str(ws / "f1.py"),
            "old_string": "value = 1\n",
            "new_string": "value = 1\n",
            "replace_all": True,
        }
        _run(hook, _payload(ws, "PreToolUse", "Bash", {"command": "true"}, -1), env)  # writes the bytecode
        times: dict[str, list[tuple[float, float]]] = {"bare": [], "pre": [], "post": [], "bash": []}
        for n in range(args.rounds):
            sides = [
                ("bare", bare, b""),
                ("pre", hook, _payload(ws, "PreToolUse", "Edit", edit, n)),
                ("post", hook, _payload(ws, "PostToolUse", "Edit", edit, n)),
                ("bash", hook, _payload(ws, "PreToolUse", "Bash", {"command": "true"}, n)),
            ]
            for name, cmd, data in sides if n % 2 == 0 else sides[::-1]:
                if name == "post" and n % 2 == 1:
                    continue  # a post hook runs after its pre: measured on even rounds only
                times[name].append(_run(cmd, data, env))
            if n % 2 == 1:
                times["post"].append(_run(hook, _payload(ws, "PostToolUse", "Edit", edit, n), env))
        med = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
        cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
        print(f"hook command vs python -c pass of {args.python}, {args.rounds} rounds; {load_note()}")
        print(
            "  (median ms, wall/CPU: "
            + ", ".join(f"{k} {med[k] * 1e3:.1f}/{cpu[k] * 1e3:.1f}" for k in med)
            + ")"
        )
        ok = True
        for key, name in (("pre", "PreToolUse Edit (intent fsynced)"), ("post", "PostToolUse Edit (commit)")):
            ratio = med[key] / med["bare"]
            ok &= report(
                f"{name} / bare start",
                ratio,
                f"<= {GOAL}",
                ratio <= GOAL,
                f"(CPU time: {cpu[key] / cpu['bare']:.2f})",
            )
        ratio = med["bash"] / med["bare"]
        ok &= report(
            "PreToolUse Bash (git snapshot) / bare start",
            ratio,
            f"<= {GOAL}",
            ratio <= GOAL,
            f"(CPU time: {cpu['bash'] / cpu['bare']:.2f}; two git processes)",
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
