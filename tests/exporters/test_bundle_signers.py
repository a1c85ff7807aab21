"""allowed_signers read as OpenSSH reads it: each line below is given to the real ``ssh-keygen -Y
verify`` and to walkback, and both must trust (or refuse) the same key for the same identity —
principal patterns (``*``, ``?``, ``!``, comma lists; no ``[...]`` classes) and validity windows
(UTC with ``Z``, local time without), in a time zone far from UTC."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from walkback.exporters.bundle.keys import NAMESPACE, allowed_signers, principal_matches

SSH_KEYGEN = shutil.which("ssh-keygen")
pytestmark = pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not installed")


@pytest.fixture
def far_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time five hours ahead of UTC, for this process and for ssh-keygen alike."""
    monkeypatch.setenv("TZ", "WBT-5")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """An ssh-keygen key, a message and its ``walkback-bundle`` signature."""
    d = tmp_path_factory.mktemp("sshsig")
    key = d / "id"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "k", "-f", key], check=True)
    msg = d / "msg"
    msg.write_bytes(b"hello")
    subprocess.run([SSH_KEYGEN, "-q", "-Y", "sign", "-f", key, "-n", NAMESPACE, msg], check=True)
    pub = " ".join(key.with_name("id.pub").read_text().split()[:2])
    return pub, msg, Path(f"{msg}.sig")


def ssh_trusts(signers: Path, identity: str, msg: Path, sig: Path) -> bool:
    r = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", signers, "-I", identity, "-n", NAMESPACE, "-s", sig],
        input=msg.read_bytes(),
        capture_output=True,
    )
    return r.returncode == 0


def _stamp(delta: timedelta) -> str:
    """A UTC time ``delta`` from now, as allowed_signers digits (no zone suffix)."""
    return (datetime.now(UTC) + delta).strftime("%Y%m%d%H%M%S")


LATER = timedelta(hours=3)
"""Three hours ahead in UTC; two hours ago once read as local time five hours ahead."""
PRINCIPALS = [
    ("[ab]lice@example.com", "alice@example.com"),
    ("[ab]lice@example.com", "[ab]lice@example.com"),
    ("al?ce@example.com", "alice@example.com"),
    ("al?ce@example.com", "allice@example.com"),
    ("*@example.com,!mallory@example.com", "mallory@example.com"),
    ("*@example.com,!mallory@example.com", "alice@example.com"),
    ("!mallory@example.com,*", "bob@elsewhere.org"),
    ("!mallory@example.com", "bob@example.com"),  # a negation alone matches nothing
    ("bob@x,alice@example.com", "alice@example.com"),
    ("alice@example.com", "ALICE@example.com"),
    ("a*e@example.com", "a.b.e@example.com"),
    ("{alice,bob}@example.com", "alice@example.com"),
]


@pytest.mark.parametrize("patterns, identity", PRINCIPALS)
def test_principal_patterns_match_as_ssh_keygen_matches_them(
    patterns: str, identity: str, signed: tuple[str, Path, Path], tmp_path: Path
) -> None:
    pub, msg, sig = signed
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"{patterns} {pub}\n")
    ours = bool(allowed_signers(signers, identity=identity))
    assert ours == ssh_trusts(signers, identity, msg, sig) == principal_matches(patterns, identity)


@pytest.mark.parametrize(
    "options",
    [
        lambda: f'valid-after="{_stamp(LATER)}"',  # local: two hours ago, valid
        lambda: f'valid-after="{_stamp(LATER)}Z"',  # UTC: not yet valid
        lambda: f'valid-after="{_stamp(LATER)}UTC"',
        lambda: f'valid-before="{_stamp(LATER)}"',  # local: expired two hours ago
        lambda: f'valid-before="{_stamp(LATER)}Z"',
        lambda: (
            f'valid-after="{_stamp(-timedelta(days=1))[:8]}",valid-before="{_stamp(timedelta(days=2))[:12]}"'
        ),
        lambda: f'valid-before="{_stamp(timedelta(hours=6))[:12]}"',  # local: an hour from now
        lambda: f'valid-after="{_stamp(timedelta(hours=4, minutes=30))[:12]}"',  # local: 30 min ago
    ],
)
def test_validity_windows_are_read_as_ssh_keygen_reads_them(
    options, far_zone: None, signed: tuple[str, Path, Path], tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pub, msg, sig = signed
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"alice@example.com {options()} {pub}\n")
    ours = bool(allowed_signers(signers, identity="alice@example.com"))
    assert ours == ssh_trusts(signers, "alice@example.com", msg, sig), signers.read_text()


def test_the_local_reading_is_not_the_utc_one(
    far_zone: None, signed: tuple[str, Path, Path], tmp_path: Path
) -> None:
    """The same digits trust the key without ``Z`` and refuse it with ``Z`` (so the zone was used)."""
    pub, _, _ = signed
    signers = tmp_path / "allowed_signers"
    stamp = _stamp(LATER)
    signers.write_text(f'alice@example.com valid-after="{stamp}" {pub}\n')
    assert allowed_signers(signers)
    signers.write_text(f'alice@example.com valid-after="{stamp}Z" {pub}\n')
    assert not allowed_signers(signers)


@pytest.mark.parametrize("bad", ["2026011", "202601011", "20261301", "2026-01-01", "20260101Zz"])
def test_a_time_ssh_keygen_would_not_read_is_refused(
    bad: str, signed: tuple[str, Path, Path], tmp_path: Path
) -> None:
    from walkback.exporters.bundle.keys import KeyFileError

    pub, _, _ = signed
    signers = tmp_path / "allowed_signers"
    signers.write_text(f'alice@example.com valid-after="{bad}" {pub}\n')
    with pytest.raises(KeyFileError, match="bad time"):
        allowed_signers(signers)
