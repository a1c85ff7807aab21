"""HTTP hardening: a token for non-loopback hosts, a Host check for loopback ones, and headers that
forbid outbound requests.

The token arrives once in the printed URL (``?token=...``), is swapped for an HttpOnly cookie and
removed from the address bar. The websocket needs no token of its own: NiceGUI only accepts
client ids minted by a page, and pages are behind this middleware.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable

from starlette.datastructures import MutableHeaders
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "walkback_token"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

CSP = "; ".join(
    [
        "default-src 'self'",
        # NiceGUI evaluates ':'-props with new Function and inlines its page bootstrap
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self' ws: wss:",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)
"""Only this origin: content written by a model cannot make the browser fetch anything else."""

Next = Callable[[Request], Awaitable[Response]]


def needs_token(host: str) -> bool:
    return host not in LOOPBACK


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _same(a: str, b: str) -> bool:
    return secrets.compare_digest(a.encode(), b.encode())


SECURE_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)


def _add_headers(headers: MutableHeaders) -> None:
    for name, value in SECURE_HEADERS:
        headers.setdefault(name, value)


def _secure(response: Response) -> Response:
    _add_headers(response.headers)
    return response


class HeadersMiddleware:
    """Adds the CSP and friends to every HTTP response. Plain ASGI: it only touches the response's
    start message, so it need not wrap each request in a task as ``BaseHTTPMiddleware`` does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                _add_headers(MutableHeaders(scope=message))
            await send(message)

        await self.app(scope, receive, send_secured)


def host_name(value: str) -> str:
    """The name in a ``Host`` header, without its port: ``[::1]:8080`` is ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class HostMiddleware:
    """Refuses a request (HTTP or websocket) whose ``Host`` is not one of ``allowed``.

    A server on loopback without a token trusts whoever can connect to it, and a web page from
    anywhere can, through DNS rebinding: ``evil.example`` resolves to 127.0.0.1 after the page has
    loaded, and the browser then sends ``Host: evil.example`` to the viewer. Only a name that means
    this machine (or the ``--host`` given) is answered. Plain ASGI, for the socket's upgrade too.
    """

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
            if host_name(host) not in self.allowed:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await _secure(PlainTextResponse("Misdirected request: unknown Host.", 421))(
                        scope, receive, send
                    )
                return
        await self.app(scope, receive, send)


def allowed_hosts(host: str) -> frozenset[str]:
    """The ``Host`` names a loopback server answers: this machine's, and the ``--host`` given."""
    return LOOPBACK | {host.strip("[]").lower()}


def token_middleware(token: str) -> type[BaseHTTPMiddleware]:
    """A middleware class that admits a request with the token (query, once) or its cookie."""

    class TokenMiddleware(BaseHTTPMiddleware):
        async def dispatch(self, request: Request, call_next: Next) -> Response:
            path = request.url.path
            if path.startswith("/_nicegui/") and not path.startswith("/_nicegui/client/"):
                return await call_next(request)  # framework assets and the socket (ids come from pages)
            given = request.query_params.get("token")
            if given is not None and _same(given, token):
                clean = request.url.remove_query_params("token")
                target = clean.path + (f"?{clean.query}" if clean.query else "")
                resp = RedirectResponse(target, status_code=303)
                resp.set_cookie(COOKIE, token, httponly=True, samesite="strict")
                return _secure(resp)
            if _same(request.cookies.get(COOKIE, ""), token):
                return await call_next(request)
            return _secure(
                PlainTextResponse("Unauthorized: open the URL with the token that walkback printed.", 401)
            )

    return TokenMiddleware
