"""The classification table: each observation gives exactly the finding and action of the rules."""

from __future__ import annotations

import pytest
from walkback.journal.recovery import ACTIONS, FINDINGS
from walkback.journal.recovery._classify import Observation, classify
from walkback.journal.recovery._dialect import Pending

PRE, POST, OTHER = "sha256:" + "a" * 64, "sha256:" + "b" * 64, "sha256:" + "c" * 64


def fs(pre: str | None = PRE, post: str | None = POST) -> Pending:
    return Pending("intent", 7, "write_file", "a.txt", effect="fs", pre=pre, post=post)


@pytest.mark.parametrize(
    ("pending", "obs", "finding", "action"),
    [
        (fs(), Observation(h=POST), "applied", "commit"),
        (fs(post=PRE), Observation(h=PRE), "applied", "commit"),  # a no-op intent: pre == post
        (fs(), Observation(h=PRE, post_source="the blob store"), "not_applied", "redo"),
        (fs(), Observation(h=PRE), "not_applied", "ask_human"),  # no post image: never guess
        (fs(), Observation(h=OTHER, pre_source="x", post_source="y"), "torn", "restore_redo"),
        (fs(), Observation(h=OTHER, post_source="y"), "torn", "restore_redo"),
        (fs(), Observation(h=OTHER), "torn", "ask_human"),
        (fs(pre=None), Observation(h=OTHER), "in_doubt", "ask_human"),
        (fs(pre=None), Observation(h=POST), "applied", "commit"),
        (fs(), Observation(h=POST, target_ok=False), "in_doubt", "ask_human"),
        (
            Pending(
                "intent",
                3,
                "external_call",
                "http://x/y",
                effect="external",
                key="r:3",
                args={"method": "POST", "url": "http://x/y"},
            ),
            Observation(),
            "in_doubt",
            "reissue",
        ),
        (
            Pending(
                "intent",
                3,
                "external_call",
                "http://x/y",
                effect="external",
                args={"method": "POST", "url": "http://x/y"},
            ),
            Observation(),
            "in_doubt",
            "ask_human",
        ),
        (
            Pending("intent", 3, "external_call", "http://x/y", effect="external", key="r:3"),
            Observation(),
            "in_doubt",
            "ask_human",  # a key but nothing to reissue
        ),
        (
            Pending("intent", 4, "run_command", "make", effect="command"),
            Observation(),
            "in_doubt",
            "ask_human",
        ),
        (
            Pending("intent", 4, "run_command", "make", effect="command", idempotent=True),
            Observation(),
            "not_applied",
            "redo",
        ),
        (Pending("intent", 5, "mystery", "", effect=""), Observation(), "in_doubt", "ask_human"),
        (
            Pending("approval", 6, "external_call", "http://x"),
            Observation(),
            "unanswered_approval",
            "ask_again",
        ),
        (Pending("lost", 9, "write_file", "a.txt"), Observation(), "never_started", "none"),
    ],
)
def test_classify_table(pending: Pending, obs: Observation, finding: str, action: str) -> None:
    d = classify(pending, obs)
    assert (d.finding, d.action) == (finding, action)
    assert d.finding in FINDINGS and d.action in ACTIONS
    assert d.detail


def test_torn_detail_names_the_hashes_and_sources() -> None:
    d = classify(
        fs(), Observation(h=OTHER, pre_source="checkpoint 0123456789ab", post_source="the blob store")
    )
    assert "sha256:cccccccccccc" in d.detail
    assert "checkpoint 0123456789ab" in d.detail and "the blob store" in d.detail
