"""Making bundles for the tests, and tampering with them the way an attacker would: by editing
the JSON file directly (never through walkback's own code)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner, Result
from walkback.exporters.bundle import EXPORTER
from walkback.exporters.bundle.keys import generate

from walkback.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def keypair(folder: Path, name: str = "key") -> tuple[Path, Path]:
    return generate(folder / name, comment=f"{name}@example.com")


def bundle(source: Path, out: Path, key: Path | None, redact: list[str] = ()) -> Path:  # type: ignore[assignment]
    return EXPORTER.export_source(source, out, key=str(key) if key else None, redact=list(redact))


def edit(path: Path, out: Path, fn: Callable[[dict[str, Any]], None]) -> Path:
    doc = orjson.loads(path.read_bytes())
    fn(doc)
    out.write_bytes(orjson.dumps(doc))
    return out


def source_lines(doc: dict[str, Any], name: str = "journal.jsonl") -> list[bytes]:
    art = next(a for a in doc["artifacts"] if a["name"] == name)
    return base64.b64decode(art["data"]).split(b"\n")


def set_source(doc: dict[str, Any], lines: list[bytes], name: str = "journal.jsonl") -> None:
    art = next(a for a in doc["artifacts"] if a["name"] == name)
    data = b"\n".join(lines)
    art["data"] = base64.b64encode(data).decode()
    art["size"] = len(data)


def flip(text: str, at: int) -> str:
    """``text`` (base64) with one bit of its decoded byte ``at`` flipped, still valid base64."""
    raw = bytearray(base64.b64decode(text))
    raw[at] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def checks(result: Result) -> dict[str, dict[str, Any]]:
    """``walkback verify --json`` output, checks by name."""
    return {c["name"]: c for c in orjson.loads(result.stdout)["checks"]}
