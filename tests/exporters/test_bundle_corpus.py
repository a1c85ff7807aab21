"""Real logs of other agents bundle and verify too (the corpus, for every format walkback reads),
and a flipped byte in any of them is caught."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest
from bundle_helpers import bundle, checks, keypair, run
from walkback.importers import detect
from walkback.journal.errors import WalkbackError

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def _readable() -> list[Path]:
    """Up to two files of every format walkback reads in the corpus (its own journal aside)."""
    out: dict[str, list[Path]] = {}
    for p in sorted(CORPUS.rglob("*")) if CORPUS.is_dir() else []:
        if not p.is_file() or p.stem.upper() in ("SOURCES", "README") or p.stat().st_size > 20_000_000:
            continue
        try:
            imp = detect(p)
        except WalkbackError:
            continue
        if imp.name != "walkback" and len(out.setdefault(imp.name, [])) < 2:
            out[imp.name].append(p)
    return [p for paths in out.values() for p in paths]


FILES = _readable()


@pytest.mark.skipif(not FILES, reason="no corpus file of a foreign format walkback reads")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.relative_to(CORPUS)}")
def test_a_foreign_log_bundles_verifies_and_its_tampered_twin_fails(path: Path, tmp_path: Path) -> None:
    key, pub = keypair(tmp_path)
    b = bundle(path, tmp_path / "b.json", key)
    ok = run("verify", b, "--key", pub, "--json")
    assert ok.exit_code == 0, [c for c in checks(ok).values() if not c["ok"]]
    doc = orjson.loads(b.read_bytes())
    art = doc["artifacts"][0]
    raw = bytearray(base64.b64decode(art["data"]))
    raw[len(raw) // 2] ^= 0x01
    art["data"] = base64.b64encode(bytes(raw)).decode()
    (tmp_path / "t.json").write_bytes(orjson.dumps(doc))
    bad = run("verify", tmp_path / "t.json", "--key", pub, "--json")
    assert bad.exit_code == 1
    assert not checks(bad)[f"digest {art['name']}"]["ok"] and not checks(bad)["merkle"]["ok"]
