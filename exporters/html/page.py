"""The replay page: markup, the inline style and code (allowed by their hashes in a
Content-Security-Policy that allows nothing else), the view data, the bundle slot and the seal slot.

Everything on the page that comes from the session is either escaped here (the title) or data the
code puts in the page as text: nothing is fetched, nothing from the session is ever markup.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
from pathlib import Path

import orjson

from .seal import BUNDLE_OPEN, CLOSE, MARK, SEAL_OPEN
from .view import View

STATIC = Path(__file__).resolve().parents[2] / "static" / "replay"
"""``static/replay`` beside the parts in the repository, ``walkback/static/replay`` once installed."""

BODY = """<div id="wb-head"></div>
<div id="wb-bar"><button id="wb-prev" title="previous step (k)">prev</button>
<button id="wb-next" title="next step (j)">next</button>
<button id="wb-play" title="play or pause (space)">play</button>
<span id="wb-pos"></span>
<input id="wb-jump" placeholder="g: go to step" size="14" aria-label="go to step">
<input id="wb-search" placeholder="/: search this session" size="28" aria-label="search">
<span id="wb-found"></span></div>
<div id="wb-timeline"><div id="wb-lane-names"></div><canvas id="wb-lanes"></canvas></div>
<div id="wb-main"><div id="wb-list"><div id="wb-list-inner"></div></div><div id="wb-step">
<noscript>This replay needs JavaScript (it runs only the code inside this file).</noscript></div></div>
<div id="wb-panels"><section><h2>Agents</h2><div id="wb-agents"></div></section>
<section><h2>Approvals</h2><div id="wb-approvals"></div></section>
<section><h2>Crash and recovery</h2><div id="wb-recovery"></div></section>
<section><h2>Integrity</h2><div id="wb-integrity"></div></section></div>
"""


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def pack(data: bytes) -> bytes:
    """Data as the page carries it: gzip (no name, no time: deterministic), base64 (which holds no
    ``<``, so nothing in it can close its slot)."""
    return base64.b64encode(gzip.compress(data, compresslevel=9, mtime=0))


def page(title: str, view: View, bundle: bytes) -> bytes:
    """The page with ``bundle`` in its slot and an empty seal slot (:func:`.seal.seal` fills it)."""
    script = (STATIC / "replay.js").read_text()
    style = (STATIC / "replay.css").read_text()
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
    )
    head = (
        "<!doctype html>\n" + MARK.decode() + '\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>walkback replay: {html.escape(title[:200])}</title>\n<style>{style}</style>\n</head><body>\n"
    )
    return b"".join(
        [
            head.encode(),
            BODY.encode(),
            b'<script id="wb-view" type="application/octet-stream">',
            pack(orjson.dumps(view.index)),
            CLOSE + b"\n",
            # one block a line, unpacked when one of its steps is shown
            b'<script id="wb-steps" type="application/octet-stream">',
            b"\n".join(pack(orjson.dumps(block)) for block in view.blocks),
            CLOSE + b"\n",
            # the code before the bundle: the first step shows while the bundle is still being read
            b"<script>" + script.encode() + CLOSE + b"\n" + BUNDLE_OPEN,
            pack(bundle),  # the bundle's exact bytes, a third of their size
            CLOSE + b"\n" + SEAL_OPEN + CLOSE + b"\n</body></html>\n",
        ]
    )
