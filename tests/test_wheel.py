"""A non-editable wheel works by itself: the parts install as walkback.<part>, static files and task
files ship as package data, and the README's main job runs from it, outside the repository."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from walkback.importers.folders import entry_id

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_declared_in_pyproject() -> None:
    """The package list is explicit (the folders map to walkback.<part>): a new subpackage must be
    added there, or the wheel silently lacks it."""
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for part in ("journal", "agent", "timeline", "importers", "exporters", "viewer", "walkback"):
        for init in (ROOT / part).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT).parts
            found.add(".".join(rel if rel[0] == "walkback" else ("walkback", *rel)))
    assert found - declared == set(), "add these to [tool.setuptools] packages"


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A new venv with only the built wheel installed; its dependencies come from this venv's
    site-packages (a path entry, so this venv's editable walkback is never on the path)."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        cwd=base,
        capture_output=True,
    )
    (whl,) = dist.glob("walkback-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(whl)], check=True)
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "walkback-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {
        k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(("PYTEST", "NICEGUI"))
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv, env


@pytest.mark.slow
def test_the_wheel_has_one_top_level_package_with_its_data(wheel_env, tmp_path: Path) -> None:
    venv, env = wheel_env
    code = (
        "import walkback.journal, walkback.viewer.app as app, walkback.agent.task as task, importlib.util;"
        "print(walkback.journal.__file__);"
        "print((app.STATIC / 'viewer.css').is_file(), (task.TASKS_DIR / 'rename.json').is_file());"
        "print(importlib.util.find_spec('journal'), importlib.util.find_spec('agent'))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert str(venv) in out[0] and str(ROOT) not in out[0]
    assert out[1] == "True True"
    assert out[2] == "None None", "the parts must not be top-level names once installed"


@pytest.mark.slow
def test_demo_runs_from_the_wheel(wheel_env, tmp_path: Path) -> None:
    venv, env = wheel_env
    run = subprocess.run(
        [str(venv / "bin" / "walkback"), "demo", "--no-open", "--dir", str(tmp_path / "d")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "demo finished" in run.stdout and "run completed" in run.stdout


@pytest.mark.slow
def test_view_serves_the_samples_from_the_wheel(wheel_env, tmp_path: Path) -> None:
    venv, env = wheel_env
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "viewer.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [str(venv / "bin" / "walkback"), "view", str(ROOT / "samples"), "--no-open", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stderr=err,
            stdout=subprocess.DEVNULL,
        )
    try:
        page = ""
        deadline = time.monotonic() + 120
        while not page and time.monotonic() < deadline and proc.poll() is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30).read().decode()
            except OSError:
                time.sleep(0.3)
        assert "walkback" in page, log.read_text()[-3000:]
        assert f"walkback viewer: http://127.0.0.1:{port}/" in log.read_text()
        css = urllib.request.urlopen(f"http://127.0.0.1:{port}/static/viewer.css", timeout=30)
        assert css.status == 200 and b"wb-" in css.read()
        # a session page, and every component it uses (ours are .js files next to their modules)
        sid = entry_id(ROOT / "samples" / "demo")
        session = urllib.request.urlopen(f"http://127.0.0.1:{port}/s/{sid}", timeout=30).read().decode()
        components = set(re.findall(r'"(/_nicegui/[^"]+/components/[^"]+\.js)"', session))
        names = {c.rsplit("/", 1)[1] for c in components}
        ours = names & {p.name for p in (ROOT / "viewer" / "components").glob("*.js")}
        assert {"step_card.js", "step_table.js", "controls.js"} <= ours, sorted(ours)
        for url in sorted(components):
            assert urllib.request.urlopen(f"http://127.0.0.1:{port}{url}", timeout=30).status == 200, url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
