"""BlobStore: content addressing, durability, verification, and no path traversal."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from journal_helpers import RecordingOps
from walkback.journal import BlobError, BlobStore, parse_hash


def test_put_stores_by_sha256_under_a_two_char_fanout(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    name = store.put(b"hello\n")
    hexd = hashlib.sha256(b"hello\n").hexdigest()
    assert name == "sha256:" + hexd
    assert (tmp_path / "blobs" / "sha256" / hexd[:2] / hexd).read_bytes() == b"hello\n"
    assert store.get(name) == b"hello\n" and store.get(hexd) == b"hello\n"
    assert store.has(name) and not store.has("sha256:" + "0" * 64)


def test_put_is_durable_and_idempotent(tmp_path: Path, rec_ops: RecordingOps) -> None:
    store = BlobStore(tmp_path / "blobs", ops=rec_ops)
    name = store.put(b"x")
    target = str(store.path(name))
    assert [op for op, _, _ in rec_ops.log if op in ("fsync", "replace")] == ["fsync", "replace"]
    assert rec_ops.ops("fsync_dir", Path(target).parent)[-1] > rec_ops.ops("replace", target)[0]
    assert not Path(target + ".tmp").exists()
    n = len(rec_ops.log)
    assert store.put(b"x") == name
    assert len(rec_ops.log) == n, "an existing blob is not written again"


def test_get_refuses_a_blob_whose_content_changed(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    name = store.put(b"original")
    store.path(name).write_bytes(b"tampered")
    with pytest.raises(BlobError, match="does not match its hash"):
        store.get(name)


def test_get_of_a_missing_blob_names_the_store(tmp_path: Path) -> None:
    with pytest.raises(BlobError, match="not in the store") as e:
        BlobStore(tmp_path / "blobs").get("sha256:" + "a" * 64)
    assert e.value.path == str(tmp_path / "blobs")


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "sha256:../../x",
        "sha256:" + "A" * 64,
        "sha256:" + "a" * 63,
        "",
        "a" * 64 + "/..",
        "md5:ab",
    ],
)
def test_only_sha256_names_are_accepted_so_no_path_can_escape(tmp_path: Path, name: str) -> None:
    with pytest.raises(BlobError, match="not a sha256 blob name"):
        parse_hash(name)
    store = BlobStore(tmp_path / "blobs")
    assert not store.has(name)
    with pytest.raises(BlobError):
        store.get(name)
