"""File images of an intent: inline when small, blobs when big, and one reader for both layouts."""

from __future__ import annotations

from pathlib import Path

import pytest
from walkback.journal import BlobStore, JournalWriter, read_records, sha256_bytes
from walkback.journal.errors import BlobError
from walkback.journal.images import INLINE_MAX, image_fields, intent_image
from walkback.journal.testing import write_run


def intent(run: Path, pre: bytes | None, post: bytes | None) -> dict[str, object]:
    """An intent journaled the way the agent journals one, read back from the file."""
    with JournalWriter.create(run, task="t") as w:
        fields = image_fields(pre, post, w.blobs)
        w.append("intent", tool="write_file", target="a", effect="fs",
                 pre=sha256_bytes(pre) if pre is not None else "absent",
                 post=sha256_bytes(post) if post is not None else "absent", **fields)  # fmt: skip
    return read_records(run)[0][-1].data


@pytest.mark.parametrize(
    ("pre", "post"),
    [
        (b"old text\n", "new text \u00e9\n".encode()),
        (b"\x89PNG\r\n\x1a\n\x00\xff", b"\x00binary\xfe"),
        (None, b"created\n"),
        (b"deleted\n", None),
        (b"x" * (INLINE_MAX + 1), b"y" * 10),
    ],
)
def test_an_image_reads_back_whichever_way_it_was_stored(
    tmp_path: Path, pre: bytes | None, post: bytes | None
) -> None:
    rec = intent(tmp_path / "run", pre, post)
    store = BlobStore(tmp_path / "run" / "blobs")
    assert intent_image(rec, "pre", store) == pre and intent_image(rec, "post", store) == post
    for which, data in (("pre", pre), ("post", post)):
        inline = data is not None and len(data) <= INLINE_MAX
        assert (f"{which}_image" in rec) == inline
        assert data is None or store.has(sha256_bytes(data))  # a copy of an inline one, unsynced


def test_text_stays_readable_in_the_journal_and_a_no_op_is_not_stored_twice(tmp_path: Path) -> None:
    rec = intent(tmp_path / "run", b"same\n", b"same\n")
    assert rec["pre_image"] == {"text": "same\n"} and "post_image" not in rec
    assert intent_image(rec, "post") == b"same\n"  # the pre image serves: same hash
    binary = intent(tmp_path / "run2", None, b"\xff\x00")
    assert binary["post_image"] == {"base64": "/wA="}


def test_journals_written_before_inline_images_read_from_the_blob_store(tmp_path: Path) -> None:
    write_run(tmp_path / "run", steps=2)  # every image a blob, as earlier versions wrote them
    store = BlobStore(tmp_path / "run" / "blobs")
    intents = [r.data for r in read_records(tmp_path / "run")[0] if r.data["type"] == "intent"]
    assert intents and all("pre_image" not in i for i in intents)
    assert [intent_image(i, "post", store) for i in intents] == [b"v1\n", b"v2\n"]
    with pytest.raises(BlobError, match="not inline and no blob store"):
        intent_image(intents[0], "post")


def test_an_image_that_does_not_match_its_hash_or_is_nowhere_is_an_error(tmp_path: Path) -> None:
    rec = intent(tmp_path / "run", b"old\n", b"new\n")
    store = BlobStore(tmp_path / "run" / "blobs")
    forged = {**rec, "post_image": {"text": "forged\n"}}
    with pytest.raises(BlobError, match="does not match its hash"):
        intent_image(forged, "post", store)
    with pytest.raises(BlobError, match="not in the store"):
        intent_image({**rec, "post_image": None, "post": sha256_bytes(b"elsewhere")}, "post", store)
    with pytest.raises(BlobError, match="no pre hash"):
        intent_image({"tool": "write_file"}, "pre", store)


def test_a_durable_put_does_not_trust_a_copy_a_power_loss_may_have_torn(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    name = store.put(b"content\n", durable=False)
    store.path(name).write_bytes(b"cont")  # what a power loss can leave of an unsynced copy
    assert store.put(b"content\n", durable=False) == name  # a copy is not checked: nothing relies on it
    assert store.put(b"content\n") == name and store.get(name) == b"content\n"
