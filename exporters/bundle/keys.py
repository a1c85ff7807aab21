"""Ed25519 keys as developers already have them: OpenSSH files (the key git signs with), PKCS#8
PEM, and git's ``allowed_signers`` trust store.

A key is named by its OpenSSH fingerprint (``SHA256:…``), the string ``ssh-keygen -l``, GitHub
and ``git log --show-signature`` print, so a person can compare it by eye.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from walkback.journal.errors import ExportError, UnusableBundle

KEY_TYPE = "ssh-ed25519"
NAMESPACE = "walkback-bundle"
"""The signing namespace: an ``allowed_signers`` line with ``namespaces="..."`` trusts a key for
bundles only when it lists this one (as ``ssh-keygen -Y verify -n`` would)."""


class KeyFileError(UnusableBundle):
    """A key or trust file cannot be used (exit code 2: unusable input)."""


def fingerprint(key: Ed25519PublicKey) -> str:
    """The OpenSSH SHA-256 fingerprint, ``SHA256:<base64 without padding>``."""
    digest = hashlib.sha256(_blob(key)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def openssh_line(key: Ed25519PublicKey, comment: str = "") -> str:
    """``ssh-ed25519 AAAA… comment``: one line of a ``.pub`` or ``allowed_signers`` file."""
    text = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    return f"{text} {comment}".rstrip()


def _blob(key: Ed25519PublicKey) -> bytes:
    return base64.b64decode(openssh_line(key).split()[1])


def generate(path: Path, *, comment: str) -> tuple[Path, Path]:
    """Write a new key pair: ``path`` (OpenSSH private key, mode 0600) and ``path.pub``.

    Raises:
        ExportError: either file exists already (a key is never overwritten).
    """
    pub_path = path.with_name(path.name + ".pub")
    for p in (path, pub_path):
        if p.exists() or p.is_symlink():
            raise ExportError("exists already; a key is never overwritten", path=p)
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private)
    pub_path.write_text(openssh_line(key.public_key(), comment) + "\n")
    return path, pub_path


def load_private(path: Path) -> Ed25519PrivateKey:
    """An Ed25519 private key from an OpenSSH or PKCS#8 PEM file.

    Raises:
        KeyFileError: unreadable, encrypted, not a private key, or not Ed25519.
    """
    data = _read(path)
    loaders = (serialization.load_ssh_private_key, serialization.load_pem_private_key)
    for load in loaders if b"OPENSSH" in data[:64] else loaders[::-1]:
        try:
            key = load(data, password=None)
        except TypeError:
            raise KeyFileError(
                "the key is encrypted; decrypt a copy first (ssh-keygen -p)", path=path
            ) from None
        except (ValueError, UnsupportedAlgorithm):
            continue
        if not isinstance(key, Ed25519PrivateKey):
            raise KeyFileError(
                f"a {type(key).__name__.removesuffix('PrivateKey')} key; bundles are signed "
                "with Ed25519 (walkback keygen makes one)",
                path=path,
            )
        return key
    if _public_or_none(data) is not None:
        raise KeyFileError("a public key; signing needs the private key (without .pub)", path=path)
    raise KeyFileError("not an OpenSSH or PKCS#8 PEM private key", path=path)


def load_public(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key from an OpenSSH ``.pub`` line or a PEM ``PUBLIC KEY``.

    Raises:
        KeyFileError: unreadable, a private key, or not an Ed25519 public key.
    """
    data = _read(path)
    key = _public_or_none(data)
    if key is not None:
        return key
    if b"PRIVATE KEY" in data:
        raise KeyFileError("a private key; verifying needs the public key (KEY.pub)", path=path)
    raise KeyFileError("not an OpenSSH (ssh-ed25519 ...) or PEM Ed25519 public key", path=path)


def _public_or_none(data: bytes) -> Ed25519PublicKey | None:
    for load in (serialization.load_ssh_public_key, serialization.load_pem_public_key):
        try:
            key = load(data.strip())
        except (ValueError, UnsupportedAlgorithm):
            continue
        return key if isinstance(key, Ed25519PublicKey) else None
    return None


def _read(path: Path, *, empty: bool = False) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise KeyFileError(f"cannot read: {e.strerror}", path=path) from None
    if not empty and not data.strip():
        raise KeyFileError("empty file", path=path)
    return data


# -- trust: one key, or git's allowed_signers ---------------------------------------------------------
@dataclass(frozen=True)
class TrustedKey:
    """A key a verifier trusts, and whom it stands for."""

    key: Ed25519PublicKey
    principals: str
    """The ``allowed_signers`` principals (``alice@example.com``), or the key file's name."""
    line: int = 0
    """The line of ``allowed_signers`` it comes from (0: given with ``--key``)."""

    @property
    def keyid(self) -> str:
        return fingerprint(self.key)


def trust_key(path: Path) -> list[TrustedKey]:
    """``--key PUB``: exactly this key."""
    return [TrustedKey(load_public(path), principals=Path(path).name)]


def allowed_signers(
    path: Path, *, identity: str | None = None, now: datetime | None = None
) -> list[TrustedKey]:
    """The Ed25519 keys ``path`` (git's / OpenSSH's ``allowed_signers`` format) trusts for bundles.

    Each line is ``principals [options] keytype base64 [comment]``. Lines for other key types, for
    certificate authorities, for other namespaces, or outside their ``valid-after``/``valid-before``
    window are left out, as ``ssh-keygen -Y verify`` would; ``identity`` keeps only the lines whose
    principal patterns match it (``-I``).

    Raises:
        KeyFileError: the file cannot be read, or a line is malformed (named by its number).
    """
    data = _read(path, empty=True)  # no lines: no trusted keys
    when = now or datetime.now(UTC)
    out: list[TrustedKey] = []
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        fields = _FIELD.findall(text)
        if len(fields) < 3:
            raise KeyFileError("expected `principals [options] keytype key`", path=path, line=n)
        principals, rest = fields[0].strip('"'), fields[1:]
        options = _options(rest.pop(0)) if not _is_key_type(rest[0]) else {}
        if len(rest) < 2 or not _is_key_type(rest[0]):
            raise KeyFileError(
                "expected a key type (ssh-ed25519 ...) after the principals", path=path, line=n
            )
        if rest[0] != KEY_TYPE or "cert-authority" in options or not _in_window(options, when, path, n):
            continue
        if "namespaces" in options and NAMESPACE not in options["namespaces"].split(","):
            continue
        if identity is not None and not principal_matches(principals, identity):
            continue
        try:
            key = serialization.load_ssh_public_key(f"{rest[0]} {rest[1]}".encode())
        except (ValueError, UnsupportedAlgorithm):
            raise KeyFileError("the key does not decode", path=path, line=n) from None
        assert isinstance(key, Ed25519PublicKey)
        out.append(TrustedKey(key, principals=principals, line=n))
    return out


def _is_key_type(word: str) -> bool:
    return word.startswith(("ssh-", "ecdsa-", "sk-"))


_FIELD = re.compile(r'(?:[^\s"]|"[^"]*")+')
"""A whitespace-separated field of an ``allowed_signers`` line; quoted parts may hold spaces."""
_OPTION = re.compile(r'(?:[^,"]|"[^"]*")+')


def _options(text: str) -> dict[str, str]:
    """``cert-authority,namespaces="git,x"`` -> ``{"cert-authority": "", "namespaces": "git,x"}``."""
    out: dict[str, str] = {}
    for opt in _OPTION.findall(text):
        name, _, value = opt.partition("=")
        out[name.strip().lower()] = value.strip().strip('"')
    return out


def _in_window(options: dict[str, str], now: datetime, path: Path, line: int) -> bool:
    for name, inside in (("valid-after", lambda t: now >= t), ("valid-before", lambda t: now <= t)):
        if name in options and not inside(_time(options[name], path, line)):
            return False
    return True


_TIME_FORMS = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}


def _time(text: str, path: Path, line: int) -> datetime:
    """``YYYYMMDD[HHMM[SS]][Z|UTC]``, as ssh-keygen reads it: UTC with the suffix, local time
    without."""
    suffix = 1 if text[-1:] in ("Z", "z") else 3 if text[-3:].lower() == "utc" else 0
    digits = text[: len(text) - suffix]
    form = _TIME_FORMS.get(len(digits)) if digits.isascii() and digits.isdigit() else None
    try:
        when = datetime.strptime(digits, form) if form else None
    except ValueError:
        when = None
    if when is None:
        raise KeyFileError(f"bad time {text!r} (expected YYYYMMDD[HHMM[SS]][Z])", path=path, line=line)
    return when.replace(tzinfo=UTC) if suffix else when.astimezone()  # a naive time is local


def principal_matches(patterns: str, identity: str) -> bool:
    """Whether ``identity`` matches a comma-separated OpenSSH pattern list, as ``ssh-keygen -Y
    verify`` decides it: ``*`` and ``?`` are the only wildcards (``[`` is a plain character), and a
    matching ``!pattern`` refuses whatever else matches."""
    matched = False
    for pat in patterns.split(","):
        negated = pat.startswith("!")
        if _pattern(pat[1:] if negated else pat).fullmatch(identity):
            if negated:
                return False
            matched = True
    return matched


def _pattern(pat: str) -> re.Pattern[str]:
    """An OpenSSH ``match_pattern`` as a regular expression (everything but ``*``/``?`` literal)."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pat), re.S)


def default_trust() -> tuple[list[TrustedKey], str] | None:
    """The trust store used when none is given (opening a bundle in the viewer): the file named by
    ``WALKBACK_ALLOWED_SIGNERS``, else git's ``gpg.ssh.allowedSignersFile``; None when neither is set."""
    import subprocess

    name = os.environ.get("WALKBACK_ALLOWED_SIGNERS", "")
    if not name:
        try:
            proc = subprocess.run(
                ["git", "config", "--get", "gpg.ssh.allowedSignersFile"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        name = proc.stdout.strip()
    if not name:
        return None
    path = Path(name).expanduser()
    return allowed_signers(path), str(path)
