"""Forks of the conversation tree: where a rewind or an edited prompt started a second branch.

A Claude Code log is a tree: every record names its predecessor in ``parentUuid``. Most records
with a shared parent are not a fork: each result of parallel tool calls hangs off the assistant
record that issued it, and hook and progress records hang off the call they watch. A fork is a
record that gets a second *turn* — a user message that is not a tool result, or an assistant
record — after it already had one (copies of one record, same ``uuid``, are not a second turn).
"""

from __future__ import annotations


class Forks:
    """Remembers each record's turns; says when a new one forks off it."""

    def __init__(self) -> None:
        self.first: dict[int, int] = {}
        """hash(parentUuid) -> hash(uuid) of its first turn (hashes: a session holds many ids)."""
        self.more: dict[int, set[int]] = {}
        """The later turns of the few records that forked."""

    def fork(self, parent: str, uuid: str) -> bool:
        """Record that turn ``uuid`` follows ``parent``; True when it is a new turn after another."""
        p, u = hash(parent), hash(uuid)
        seen = self.first.setdefault(p, u)
        if seen == u:
            return False
        later = self.more.setdefault(p, set())
        if u in later:
            return False
        later.add(u)
        return True
