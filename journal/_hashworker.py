"""Hash verification on a second core, for big journals (run as a script by journal.hashcheck).

Usage: python -I _hashworker.py PATH OFFSET

Reads PATH from OFFSET, splits it into lines exactly as the reader does (on ``\\n``; a last line
without one is left out) and writes, per line, a little-endian uint16 to stdout: 0x8000 | (line
length with its newline & 0x7FFF) when the line ends in ``,"h":"<64 hex>"}`` and those 64 hex
digits are the sha256 of the bytes before that suffix, else 0. The length tag lets the reader
check it is looking at the same line. Imports only the standard library, so it starts fast.
"""

import binascii
import hashlib
import sys
from array import array

MARK = b',"h":"'
SUFFIX = len(MARK) + 64 + 2
BLOCK = 1 << 22


def main(path: str, offset: int) -> None:
    sha = hashlib.sha256
    hexlify = binascii.hexlify
    out = sys.stdout.buffer
    with open(path, "rb") as f:
        f.seek(offset)
        carry = b""
        while block := f.read(BLOCK):
            lines = block.split(b"\n")
            lines[0] = carry + lines[0]
            carry = lines.pop()
            tags = array("H")
            tag = tags.append
            for line in lines:
                n = len(line)
                i = n - SUFFIX
                suffixed = i > 0 and line.startswith(MARK, i)
                if suffixed and line[i + 6 : i + 70] == hexlify(sha(line[:i]).digest()):
                    tag(0x8000 | ((n + 1) & 0x7FFF))
                else:
                    tag(0)
            if sys.byteorder != "little":
                tags.byteswap()
            out.write(tags.tobytes())
            out.flush()


if __name__ == "__main__":
    try:
        main(sys.argv[1], int(sys.argv[2]))
    except (BrokenPipeError, KeyboardInterrupt):
        pass
