"""Importing Inspect logs and OTLP traces against raw parsing of the same bytes, and their memory.

(1) an ``.eval`` of the largest corpus log's sample repeated to about --mb MB (each copy its own
    sample member, as Inspect writes one per sample) imported whole (``importers.load``) vs
    inflating and ``orjson.loads`` of every member.            ratio = import / raw, goal <= 3.0.
(2) the same samples as one ``.json`` log (found by byte span, parsed one at a time) vs
    ``orjson.loads`` of the whole file.                        ratio = import / raw, goal <= 3.0.
(3) an OTLP/JSON trace of GenAI spans (agents, chat, tools) of about --mb MB imported vs
    ``orjson.loads`` of the file.                               ratio = import / raw, goal <= 3.0.
(4) peak RSS of a fresh process importing each file vs the file's size (goal <= 1.5 for the
    Inspect logs, which are read a sample at a time; an OTLP document is parsed whole).

Usage: ./run bench import_inspect [--mb MB] [--rounds R]
"""

from __future__ import annotations

import argparse
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, child_peak_rss, load_note, report, scratch_dir, timed  # noqa: E402
from walkback.importers import load  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SOURCE = CORPUS / "inspect" / "2025-05-12T20-27-36-04-00_browser.json"
LOAD = (
    "import sys; from walkback.importers import load; "
    "s = load(sys.argv[1]); assert len(s) == int(sys.argv[2])"
)
IMPORTS = "import walkback.importers, walkback.timeline, walkback.journal"


def scaled_logs(tmp: Path, mb: int) -> tuple[Path, Path, int]:
    """An ``.eval`` and a ``.json`` log holding the corpus sample repeated to about ``mb`` MB on disk
    each (the ``.eval`` inflates to several times that); returns the ``.json`` log's sample count."""
    log = orjson.loads(SOURCE.read_bytes())
    sample = log.pop("samples")[0]
    member = orjson.dumps(sample)
    per_member = len(zlib.compress(member, 6))
    ev = tmp / "scaled.eval"
    with zipfile.ZipFile(ev, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", orjson.dumps({"version": 2, "eval": log["eval"]}))
        for k in range(max(1, mb * 1_000_000 // per_member)):
            z.writestr(f"samples/{k + 1}_epoch_1.json", orjson.dumps({**sample, "id": k + 1}))
        z.writestr("header.json", orjson.dumps(log, option=orjson.OPT_INDENT_2))
    js = tmp / "scaled.json"
    copies = max(1, mb * 1_000_000 // len(orjson.dumps(sample, option=orjson.OPT_INDENT_2)))
    with open(js, "wb") as f:
        head = orjson.dumps(log, option=orjson.OPT_INDENT_2)
        f.write(head[:-2] + b',\n  "samples": [\n')
        for k in range(copies):
            body = orjson.dumps({**sample, "id": k + 1}, option=orjson.OPT_INDENT_2)
            f.write(b"\n".join(b"    " + line for line in body.split(b"\n")))
            f.write(b",\n" if k + 1 < copies else b"\n")
        f.write(b"  ]\n}")
    return ev, js, copies


def raw_eval(path: Path) -> None:
    loads = orjson.loads
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            loads(z.read(name))


def raw_json(path: Path) -> None:
    orjson.loads(path.read_bytes())


def genai_trace(tmp: Path, mb: int) -> Path:
    """An OTLP/JSON document of agent runs: invoke_agent > chat, execute_tool (with a subagent)."""

    def attrs(**kv: Any) -> list[dict[str, Any]]:
        out = []
        for k, v in kv.items():
            value = {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}
            out.append({"key": k.replace("__", "."), "value": value})
        return out

    spans: list[bytes] = []
    size = 0
    n = 0
    t = 1_760_000_000_000_000_000
    trace = "5b8efff798038103d269b633813fc60c"
    while size < mb * 1_000_000:
        root = f"{n:016x}"
        spans.append(
            orjson.dumps(
                {
                    "traceId": trace,
                    "spanId": root,
                    "name": "invoke_agent coder",
                    "kind": 1,
                    "startTimeUnixNano": str(t),
                    "endTimeUnixNano": str(t + 10**9),
                    "attributes": attrs(
                        gen_ai__operation__name="invoke_agent",
                        gen_ai__agent__name="coder",
                        gen_ai__agent__id=f"a{n}",
                    ),
                }
            )
        )
        for j in range(20):
            sid = f"{n:08x}{j:08x}"
            chat = {
                "traceId": trace,
                "spanId": sid,
                "parentSpanId": root,
                "name": "chat gpt-4o",
                "kind": 3,
                "startTimeUnixNano": str(t + j * 10**7),
                "endTimeUnixNano": str(t + j * 10**7 + 5 * 10**6),
                "attributes": attrs(
                    gen_ai__operation__name="chat",
                    gen_ai__request__model="gpt-4o",
                    gen_ai__usage__input_tokens=1200 + j,
                    gen_ai__usage__output_tokens=80,
                    gen_ai__output__messages='[{"role":"assistant","parts":[{"type":"text",'
                    '"content":"' + "x" * 300 + '"}]}]',
                ),
            }
            tool = {
                "traceId": trace,
                "spanId": f"{n:08x}{j:07x}f",
                "parentSpanId": root,
                "name": "execute_tool bash",
                "kind": 1,
                "startTimeUnixNano": str(t + j * 10**7 + 6 * 10**6),
                "endTimeUnixNano": str(t + j * 10**7 + 9 * 10**6),
                "attributes": attrs(
                    gen_ai__operation__name="execute_tool",
                    gen_ai__tool__name="bash",
                    gen_ai__tool__call__id=f"call_{n}_{j}",
                    gen_ai__tool__call__arguments='{"cmd": "ls -la src/"}',
                    gen_ai__tool__call__result="total 0\n" * 20,
                ),
            }
            for s in (chat, tool):
                spans.append(orjson.dumps(s))
                size += len(spans[-1])
        n += 1
        t += 2 * 10**9
    path = tmp / "trace.json"
    path.write_bytes(
        b'{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":'
        b'{"stringValue":"bench"}}]},"scopeSpans":[{"scope":{"name":"bench"},"spans":['
        + b",\n".join(spans)
        + b"]}]}]}\n"
    )
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ok = True
    with scratch_dir("wb-bench-inspect-") as tmp_name:
        tmp = Path(tmp_name)
        ev, js, copies = scaled_logs(tmp, a.mb)
        trace = genai_trace(tmp, a.mb)
        print(load_note())
        counts = {}
        for label, path, raw in (
            ("inspect .eval", ev, raw_eval),
            ("inspect .json", js, raw_json),
            ("otel OTLP/JSON", trace, raw_json),
        ):
            size = path.stat().st_size
            events = len(load(path))
            counts[path] = events
            print(
                f"{label}: {size / 1e6:.0f} MB, {events:,} events"
                + (f" ({copies} samples in the .json)" if path != trace else "")
            )
            raw_t, imp_t = best_of(a.rounds, timed(lambda p=path, r=raw: r(p)), timed(lambda p=path: load(p)))
            ok &= report(
                f"{label}: import / raw orjson.loads",
                imp_t / raw_t,
                "<= 3.0",
                imp_t / raw_t <= 3.0,
                f"(raw {raw_t:.2f} s, import {imp_t:.2f} s = {imp_t / events * 1e6:.1f} us per event)",
            )
        base = child_peak_rss(IMPORTS)
        for label, path, goal in (
            ("inspect .eval", ev, 1.5),
            ("inspect .json", js, 1.5),
            ("otel OTLP/JSON", trace, None),
        ):
            size = path.stat().st_size
            peak = child_peak_rss(LOAD, str(path), str(counts[path]))
            met = goal is None or peak / size <= goal
            ok &= report(
                f"{label}: peak RSS / file size",
                peak / size,
                f"<= {goal}" if goal else "(none)",
                met,
                f"(peak {peak / 1e6:.0f} MB for {size / 1e6:.0f} MB; imports alone {base / 1e6:.0f} MB)",
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
