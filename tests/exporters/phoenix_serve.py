"""Start Arize Phoenix (``phoenix serve``) with its gRPC receiver bound to 127.0.0.1 only.

Phoenix binds its OTLP/gRPC port on every interface; the tests send nothing but OTLP/HTTP to
127.0.0.1, so the gRPC server is confined to the loopback too. Run with Phoenix's own Python.
"""

import sys

import grpc.aio

_server = grpc.aio.server


def _loopback_server(*args, **kwargs):  # type: ignore[no-untyped-def]
    server = _server(*args, **kwargs)
    add = server.add_insecure_port
    server.add_insecure_port = lambda address: add(address.replace("[::]", "127.0.0.1"))  # type: ignore[method-assign]
    return server


grpc.aio.server = _loopback_server

from phoenix.server.main import main  # noqa: E402

sys.argv = ["phoenix", "serve"]
sys.exit(main())
