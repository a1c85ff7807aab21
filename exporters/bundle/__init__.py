"""Signed bundles: a session's source files and a signed account of them, in one JSON file.

``walkback export bundle`` writes one (:mod:`.sign`), ``walkback verify`` checks one offline
(:mod:`.verify`), and a bundle opens like any other session (:mod:`.importer`). The format and the
verification procedure are in ``docs/bundle.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from walkback.exporters.base import Option
from walkback.timeline.session import Session

from .keys import load_private
from .redact import Rule
from .secrets import rules_of
from .sign import Sources, write_bundle

__all__ = ["EXPORTER", "NO_DEFAULT_REDACTION", "REDACT", "BundleExporter"]

REDACT = Option(
    "redact",
    "Hide content, still verifiable: a field path (args.content), re:REGEX, or agent:ID "
    "(secrets are hidden by default).",
    multiple=True,
    metavar="RULE",
)
NO_DEFAULT_REDACTION = Option(
    "no-default-redaction",
    "Keep API keys, tokens, private keys and .env secrets (hidden by default).",
    flag=True,
)


class BundleExporter:
    """``walkback export bundle``: a DSSE-signed in-toto statement over the session's source files."""

    name = "bundle"
    suffix = ".json"
    extra = None
    redacts = True
    """It redacts while it snapshots (``walkback export`` hands it the rules, not a copy)."""
    options: tuple[Option, ...] = (
        Option(
            "key",
            "Ed25519 private key to sign with (OpenSSH or PKCS#8 PEM; `walkback keygen` makes one).",
            metavar="KEY",
            unset="unsigned: no --key given; `walkback verify` will report it as unsigned",
        ),
        REDACT,
        NO_DEFAULT_REDACTION,
    )

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        """Bundle ``session``; one opened from a bundle is bundled again from its carried files."""
        v = session.verification
        entry, part = v.reread() if v is not None else (None, None)
        return self._write(lambda rules: Sources.of(session, rules), out, entry, part, options)

    def export_source(self, path: Path, out: Path, **options: Any) -> Path:
        """Bundle the session at ``path``: the address given (a run directory, ``file#part``) is what
        ``verify`` imports again; a bundle is bundled again from its carried files."""
        from walkback.importers import detect, load
        from walkback.importers.registry import split_part

        if detect(path).name == "bundle":  # its session holds the extracted files: kept while bundling
            return self.export(load(path), out, **options)
        file, part = split_part(path)
        # the files at ``path`` and its hook journal, if hooked: what verify imports again
        session = load(path)
        return self._write(lambda rules: Sources.of(session, rules), out, file, part, options)

    def _write(
        self,
        sources: Callable[[list[Rule]], Sources],
        out: Path,
        entry: Path | None,
        part: str | None,
        options: dict[str, Any],
    ) -> Path:
        """Check the key and rules before anything is read, then bundle."""
        key = load_private(Path(options["key"])) if options.get("key") else None
        rules = rules_of(options)
        return write_bundle(
            sources(rules),
            Path(out),
            entry=entry,
            part=part,
            key=key,
            rules=rules,
            on_redactions=options.get("on_redactions"),
        )


EXPORTER = BundleExporter()
