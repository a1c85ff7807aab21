"""The RFC 6962 / RFC 9162 Merkle tree over a session's source lines, and inclusion proofs.

``leaf = sha256(0x00 || line)``, ``node = sha256(0x01 || left || right)``, the empty tree is
``sha256("")``. A line is the bytes between two ``\\n`` (a ``\\r`` stays part of it); a last line
without its newline is a line too. The hot loops run in C (``map`` over ``hashlib``): a million
leaves cost about a second, not the many seconds a Python loop would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from operator import methodcaller

LEAF = b"\x00"
NODE = b"\x01"
HASH = 32
MAX_BLOCKS = 4096
"""Block roots the predicate carries at most (they say where damage starts, to a block)."""

_sha = hashlib.sha256
_digest = methodcaller("digest")
_leaf = LEAF.__add__


def leaves(lines: Sequence[bytes]) -> bytes:
    """The leaf hashes of ``lines``, concatenated (32 bytes each)."""
    return b"".join(map(_digest, map(_sha, map(_leaf, lines))))


class LineLeaves:
    """Leaf hashes of a file fed in blocks of any size (lines may span blocks)."""

    def __init__(self) -> None:
        self.hashes = bytearray()
        self._carry = b""
        self.last: bytes = b""
        """The last complete line seen that contains ``"h":"`` (a v1 chain head), if any."""

    def feed(self, block: bytes) -> None:
        lines = (self._carry + block).split(b"\n") if self._carry else block.split(b"\n")
        self._carry = lines.pop()
        self.hashes += leaves(lines)
        for line in reversed(lines):
            if b'"h":"' in line:
                self.last = line
                break

    def finish(self) -> bytearray:
        """All leaf hashes, the unterminated last line's included."""
        if self._carry:
            self.hashes += leaves([self._carry])
            if b'"h":"' in self._carry:
                self.last = self._carry
            self._carry = b""
        return self.hashes

    @property
    def count(self) -> int:
        return len(self.hashes) // HASH


def _level(nodes: bytes) -> bytes:
    """One level up: each pair hashed, an odd last node carried up unchanged (RFC 6962's shape)."""
    n = len(nodes) // HASH
    pairs = n // 2 * 2 * HASH
    view = memoryview(nodes)
    step = 2 * HASH
    up = b"".join(
        map(
            _digest,
            map(
                _sha,
                map(
                    NODE.__add__,
                    map(view.__getitem__, map(slice, range(0, pairs, step), range(step, pairs + 1, step))),
                ),
            ),
        )
    )
    return up + bytes(view[pairs:]) if n % 2 else up


def root(hashes: bytes) -> bytes:
    """The tree head of concatenated leaf (or aligned subtree) hashes."""
    if not hashes:
        return _sha(b"").digest()
    level = bytes(hashes)
    while len(level) > HASH:
        level = _level(level)
    return level


def block_size(count: int) -> int:
    """The smallest power of two that splits ``count`` leaves into at most :data:`MAX_BLOCKS` blocks."""
    size = 1
    while (count + size - 1) // size > MAX_BLOCKS:
        size *= 2
    return size


def block_roots(hashes: bytes, size: int) -> list[bytes]:
    """The root of every ``size`` leaves (the last block may be short); subtrees of the one tree."""
    step = size * HASH
    return [root(hashes[i : i + step]) for i in range(0, len(hashes), step)]


def tree(hashes: bytes) -> tuple[bytes, int, list[bytes]]:
    """``(root, block size, block roots)`` of concatenated leaf hashes.

    One bottom-up pass: with power-of-two blocks, the level ``log2(block size)`` of that pass is
    exactly the block roots (the last one of a short block too, carried up unchanged until then).
    """
    size = block_size(len(hashes) // HASH)
    level = bytes(hashes)
    width = 1
    while width < size:
        level = _level(level)
        width *= 2
    blocks = [level[i : i + HASH] for i in range(0, len(level), HASH)]
    return root(level), size, blocks


def _largest_power_below(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def inclusion_proof(hashes: bytes, index: int) -> list[bytes]:
    """The audit path of leaf ``index`` (RFC 9162 §2.1.3.1), from the concatenated leaf hashes."""
    n = len(hashes) // HASH
    if not 0 <= index < n:
        raise ValueError(f"leaf {index} is not in a tree of {n}")
    if n == 1:
        return []
    k = _largest_power_below(n)
    if index < k:
        return [*inclusion_proof(hashes[: k * HASH], index), root(hashes[k * HASH :])]
    return [*inclusion_proof(hashes[k * HASH :], index - k), root(hashes[: k * HASH])]


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], head: bytes) -> bool:
    """RFC 9162 §2.1.3.2: whether ``proof`` puts ``leaf`` at ``index`` of the tree with ``head``."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = _sha(NODE + p + r).digest()
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = _sha(NODE + r + p).digest()
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == head
