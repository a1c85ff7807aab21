"""Signing and verifying the bundle of a 1,000,000-record journal (about 450 MB).

(1) the bundle's own work on the bytes vs raw sha256 of the same file (read + hash):
    sign   = stream the journal into a bundle (subject digest, Merkle leaves, base64, write),
             the RFC 6962 tree and the Ed25519 signature;
    verify = read the bundle back (decode the artifact to a file, digest, leaves), the tree and
             the signature check.                    throughput ratio = raw time / side time, goal >= 0.5.
    Printed beside them, the floor this format sets for any signer or verifier: the file's digest,
    a leaf hash per line and the tree over them (hashlib driven through ``map``, nothing else:
    no base64, no writing) vs raw sha256, and sign / verify vs that floor.
(2) the whole commands, run once each in a fresh process: `walkback export bundle` (import, the
    snapshot and its import, the facts, the bundle) and `walkback verify` (the bundle's work plus
    the re-import and every fact derived again), with their peak RSS vs the journal's size
    (goal <= 1.5) and their time vs one import of the journal (`walkback show`'s work), which is
    what both must pay at least once.

Usage: ./run bench bundle [--records N] [--rounds R]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, child_peak_rss, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.exporters.bundle import container, merkle  # noqa: E402
from walkback.exporters.bundle.dsse import PAYLOAD_TYPE, b64decode, b64encode, sign, verifies  # noqa: E402
from walkback.exporters.bundle.keys import generate, load_private  # noqa: E402
from walkback.journal.testing import synth_journal  # noqa: E402

EXPORT = (
    "import sys; from pathlib import Path; from walkback.exporters.bundle import EXPORTER;"
    "EXPORTER.export_source(Path(sys.argv[1]), Path(sys.argv[2]), key=sys.argv[3], redact=[])"
)
VERIFY = (
    "import sys; from pathlib import Path; from walkback.exporters.bundle.keys import trust_key;"
    "from walkback.exporters.bundle.verify import open_bundle, verify\n"
    "with open_bundle(Path(sys.argv[1])) as f:\n"
    "    v, _ = verify(f, trust=trust_key(Path(sys.argv[2])), origin=sys.argv[1])\n"
    "assert v.ok, [c for c in v.checks if not c.ok]"
)
LOAD = "import sys; from walkback.importers import load; load(sys.argv[1])"


def raw_sha256(path: Path) -> None:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(container.BLOCK):
            h.update(block)
    h.hexdigest()


def format_floor(path: Path) -> None:
    """The digest, the line leaves and the tree: what the format asks of every signer and verifier."""
    h = hashlib.sha256()
    leaves = merkle.LineLeaves()
    with open(path, "rb") as f:
        while block := f.read(container.BLOCK):
            h.update(block)
            leaves.feed(block)
    merkle.tree(bytes(leaves.finish()))
    h.hexdigest()


def sign_bytes(path: Path, out: Path, key: Any) -> None:
    def envelope(carried: list[container.Carried]) -> dict[str, Any]:
        head, size, blocks = merkle.tree(b"".join(bytes(c.leaves.hashes) for c in carried))
        payload = repr((head.hex(), [b.hex() for b in blocks], [c.sha256 for c in carried])).encode()
        return {
            "payloadType": PAYLOAD_TYPE,
            "payload": b64encode(payload),
            "signatures": [sign(key, PAYLOAD_TYPE, payload)],
        }

    with open(out, "wb") as f:
        container.write(f, [("journal.jsonl", path)], envelope)


def verify_bytes(bundle: Path, tmp: Path, key: Any) -> None:
    for old in tmp.glob("artifact-*"):
        old.unlink()
    with open(bundle, "rb") as f:
        opened = container.read(f, tmp, origin=str(bundle))
    merkle.tree(b"".join(bytes(d.item.leaves.hashes) for d in opened.data))
    doc = opened.doc
    assert opened.payload is not None
    assert verifies(
        key.public_key(),
        doc["payloadType"],
        b64decode(opened.payload),
        b64decode(doc["signatures"][0]["sig"]),
    )


def once(code: str, *args: str) -> tuple[float, int]:
    t = time.perf_counter()
    peak = child_peak_rss(code, *args)
    return time.perf_counter() - t, peak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ok = True
    with scratch_dir("wb-bench-bundle-") as tmp:
        d = Path(tmp)
        path = d / "run" / "journal.jsonl"
        path.parent.mkdir()
        size = synth_journal(path, a.records)
        key_path, pub_path = generate(d / "key", comment="bench@example.com")
        key = load_private(key_path)
        (d / "out").mkdir()
        print(f"{a.records:,} records, {size / 1e6:.0f} MB; best of {a.rounds} interleaved rounds")
        print(load_note())
        sign_bytes(path, d / "bytes.json", key)
        raw_t, floor_t, sign_t, verify_t = best_of(
            a.rounds,
            timed(lambda: raw_sha256(path)),
            timed(lambda: format_floor(path)),
            timed(lambda: sign_bytes(path, d / "bytes.json", key)),
            timed(lambda: verify_bytes(d / "bytes.json", d / "out", key)),
        )
        for name, t in (("sign", sign_t), ("verify", verify_t)):
            ok &= report(
                f"{name} (bytes): throughput vs raw sha256",
                raw_t / t,
                ">= 0.5",
                raw_t / t >= 0.5,
                f"(raw {raw_t:.2f} s = {size / raw_t / 1e6:.0f} MB/s, "
                f"{name} {t:.2f} s = {size / t / 1e6:.0f} MB/s)",
            )
        print(
            f"{'  the format floor: throughput vs raw sha256':<46} {raw_t / floor_t:6.2f}   "
            f"(digest + a leaf per line + tree: {floor_t:.2f} s = {size / floor_t / 1e6:.0f} MB/s;"
            f" sign / floor {sign_t / floor_t:.2f}, verify / floor {verify_t / floor_t:.2f})"
        )
        load_t, _ = once(LOAD, str(path))
        out = d / "bundle.json"
        export_t, export_peak = once(EXPORT, str(path.parent), str(out), str(key_path))
        verify_full_t, verify_peak = once(VERIFY, str(out), str(pub_path))
        for name, t, peak in (
            ("export bundle", export_t, export_peak),
            ("verify", verify_full_t, verify_peak),
        ):
            ok &= report(
                f"walkback {name}: peak RSS / journal size",
                peak / size,
                "<= 1.5",
                peak / size <= 1.5,
                f"(peak {peak / 1e6:.0f} MB)",
            )
            print(
                f"{'  time / one import of the journal':<46} {t / load_t:6.2f}   "
                f"({t:.1f} s vs {load_t:.1f} s; throughput vs raw sha256 {raw_t / t:.3f})"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
