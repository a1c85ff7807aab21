"""``walkback keygen`` and ``walkback verify``: the keys that sign bundles, and checking a bundle."""

from __future__ import annotations

import getpass
import socket
import sys
from pathlib import Path

import click

from .common import emit_json, handle_errors, json_option, safe


@click.command()
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="Private key file to write (mode 0600); the public key goes to OUT.pub.",
)
@click.option("-C", "--comment", default=None, help="Comment on the public key (default: user@host).")
@handle_errors
def keygen(out: Path, comment: str | None) -> None:
    """Make an Ed25519 key pair for signing bundles (OpenSSH format, like ssh-keygen -t ed25519).

    Any existing OpenSSH Ed25519 key (the one git signs with) or PKCS#8 PEM key works as well.
    """
    from walkback.exporters.bundle.keys import fingerprint, generate, load_public

    private, public = generate(out, comment=comment or f"{getpass.getuser()}@{socket.gethostname()}")
    click.echo(
        safe(
            f"{private}: private key (keep it secret); {public}: public key, "
            f"{fingerprint(load_public(public))}"
        )
    )
    click.echo(safe(f"trust it: echo \"$(whoami) $(cut -d' ' -f1,2 {public})\" >> allowed_signers"), err=True)


@click.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option(
    "--key", "key", type=click.Path(path_type=Path), help="Trust exactly this public key (KEY.pub)."
)
@click.option(
    "--allowed-signers",
    "signers",
    type=click.Path(path_type=Path),
    help="Trust the keys of this git/OpenSSH allowed_signers file "
    "(default: git's gpg.ssh.allowedSignersFile).",
)
@click.option("--identity", help="With --allowed-signers: only keys whose principals match NAME.")
@click.option(
    "--reveal",
    "reveals",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="LINE-FILE",
    help="Prove redacted lines: each line of LINE-FILE must be an original a redaction hid.",
)
@json_option
@handle_errors
def verify(
    bundle: Path,
    key: Path | None,
    signers: Path | None,
    identity: str | None,
    reveals: tuple[Path, ...],
    as_json: bool,
) -> None:
    """Verify a signed bundle offline: signature and trust, digests, Merkle root, chain heads, and
    every fact re-derived by importing the carried files again.

    Exit 0 valid and trusted, 1 a check failed (signature, untrusted key, digest, chain, count,
    Merkle, truncated tail, revealed line), 2 unusable input.
    """
    from walkback.exporters.bundle.keys import allowed_signers, default_trust, trust_key
    from walkback.exporters.bundle.verify import verify_file

    if key is not None and signers is not None:
        raise click.UsageError("give --key or --allowed-signers, not both")
    if identity is not None and signers is None:
        raise click.UsageError("--identity needs --allowed-signers")
    if key is not None:
        trust = trust_key(key)
    elif signers is not None:
        trust = allowed_signers(signers, identity=identity)
    else:
        found = default_trust()
        if found is None:
            raise click.UsageError(
                "say whom to trust: --key PUB or --allowed-signers FILE "
                "(or set git's gpg.ssh.allowedSignersFile)"
            )
        trust = found[0]
    lines = [line for p in reveals for line in _lines(p)]
    v, _ = verify_file(bundle, trust=trust, reveal=lines)
    if as_json:
        emit_json(v.as_json())
    else:
        for c in v.checks:
            where = (
                f" [at {c.at}" + (f", step {c.event + 1}" if c.event is not None else "") + "]"
                if c.at
                else ""
            )
            click.echo(safe(f"{'ok  ' if c.ok else 'FAIL'}  {c.name}: {c.reason}{where}"))
        click.echo(safe(f"{bundle}: {v.verdict}"), err=not v.ok)
    sys.exit(0 if v.ok else 1)


def _lines(path: Path) -> list[bytes]:
    """The lines of a reveal file (each as it stood in the original source, without its newline)."""
    from walkback.exporters.bundle.keys import KeyFileError

    try:
        data = path.read_bytes()
    except OSError as e:
        raise KeyFileError(f"cannot read: {e.strerror}", path=path) from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise KeyFileError("empty file: nothing to reveal", path=path)
    return lines
