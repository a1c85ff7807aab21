"""A shell hook finds the repository as git does, without asking git (a process less per call):
the same top folder and git dir as ``git rev-parse`` in a plain repository, a subfolder, a linked
worktree (a ``.git`` file), through a symlink, and nothing outside a repository; git is asked where
its rules could answer otherwise (a submodule: its config sets ``core.worktree``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from walkback.agent.hooks import snapshot
from walkback.agent.hooks.snapshot import repo_of

IDENT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "src" / "deep").mkdir(parents=True)
    git(r, "init", "-q")
    (r / "src" / "a.py").write_text("a = 1\n")
    git(r, "add", ".")
    git(r, "commit", "-qm", "one")
    return r


def test_the_same_answer_as_git(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    (tmp_path / "link").symlink_to(repo / "src")
    places = [repo, repo / "src" / "deep", tmp_path / "wt", tmp_path / "link", tmp_path]
    asked: list[str] = []
    monkeypatch.setattr(snapshot, "_ask_git", lambda cwd: asked.append(cwd))
    found = [repo_of(str(p)) for p in places]
    monkeypatch.undo()
    assert found == [snapshot._ask_git(str(p)) for p in places]
    assert found[0] == (repo, repo / ".git") and found[-1] is None
    assert found[2] == (tmp_path / "wt", repo / ".git" / "worktrees" / "wt")
    assert asked == []  # none of these needed git


def test_git_is_asked_where_its_rules_decide(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer = tmp_path / "outer"
    git(tmp_path, "init", "-q", str(outer))
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo), "sub")
    assert repo_of(str(outer / "sub")) == (outer / "sub", outer / ".git" / "modules" / "sub")
    asked: list[str] = []
    monkeypatch.setattr(snapshot, "_ask_git", lambda cwd: asked.append(cwd))
    repo_of(str(outer / "sub"))
    repo_of(str(repo / ".git" / "objects"))  # inside the git dir: not a work tree for git
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    repo_of(str(repo / "src"))
    monkeypatch.delenv("GIT_DIR")
    git(repo, "config", "core.worktree", str(repo / "src"))
    repo_of(str(repo / "src"))
    assert asked == [str(outer / "sub"), str(repo / ".git" / "objects"), str(repo / "src"), str(repo / "src")]


def test_a_dot_git_that_is_no_repository_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "p" / "q").mkdir(parents=True)
    (tmp_path / "p" / ".git").write_text("not a link\n")
    (tmp_path / "p" / "q" / ".git").mkdir()  # empty: no HEAD
    assert repo_of(str(tmp_path / "p" / "q")) is None
