"""``walkback export otlp``: a session as one OpenTelemetry trace (GenAI semantic conventions).

``-o OUT.json`` writes an OTLP/JSON ``ExportTraceServiceRequest``; ``--endpoint URL`` pushes the
same spans to an OTLP/HTTP collector as protobuf through the OpenTelemetry SDK (the ``otlp``
extra), in batches, with retries. The mapping is in docs/exports.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from walkback.journal.errors import ExportError
from walkback.timeline.session import Session

from ..base import Option, atomic_output, need
from ._json import write
from ._spans import trace

DEFAULT_TIMEOUT = 10.0
"""Seconds the SDK keeps retrying one batch before the collector counts as unreachable."""


def parse_headers(values: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``K=V`` strings as a header mapping (the value may itself hold ``=``)."""
    out: dict[str, str] = {}
    for v in values:
        key, eq, value = v.partition("=")
        if not eq or not key.strip():
            raise ExportError(f"a header is KEY=VALUE, not {v!r}")
        out[key.strip()] = value.strip()
    return out


class OtlpExporter:
    """``walkback export otlp``: OTLP/JSON to a file, or OTLP/HTTP to a collector."""

    name = "otlp"
    suffix = ".json"
    extra = "otlp"
    options: tuple[Option, ...] = (
        Option(
            "endpoint",
            "Push to this OTLP/HTTP collector (http://host:4318 or its /v1/traces URL) "
            "instead of writing a file.",
            metavar="URL",
        ),
        Option("header", "A header for the collector, KEY=VALUE (repeatable).", multiple=True, metavar="K=V"),
        Option(
            "timeout", f"Seconds to keep retrying a batch (default {DEFAULT_TIMEOUT:g}).", metavar="SECONDS"
        ),
    )
    needs_output = False
    """With ``--endpoint`` there is no output file."""

    def export(self, session: Session, out: Path | None, **options: Any) -> Path | str:
        """Write ``session`` to ``out`` as OTLP/JSON, or push it to ``endpoint``; return where it went."""
        endpoint = options.get("endpoint")
        if endpoint:
            need("opentelemetry.sdk.trace", "otlp", "otlp")
            need("opentelemetry.exporter.otlp.proto.http.trace_exporter", "otlp", "otlp")
            from ._push import push, traces_url

            try:
                timeout = float(options.get("timeout") or DEFAULT_TIMEOUT)
            except ValueError:
                raise ExportError(f"--timeout is a number of seconds, not {options['timeout']!r}") from None
            push(
                trace(session), endpoint, headers=parse_headers(options.get("header") or ()), timeout=timeout
            )
            return traces_url(endpoint)
        if out is None:
            raise ExportError("otlp needs -o OUT.json or --endpoint URL")
        with atomic_output(Path(out)) as f:
            write(trace(session), f)
        return Path(out)


EXPORTER = OtlpExporter()
