"""Hardening shared by every dialect: Host and Origin allow-lists, bounded bodies, rate limits
(the failed-login policy is :class:`LoginThrottle`).

:class:`HardeningMiddleware` is plain ASGI (so streaming and disconnects pass through
untouched). Before any route runs it refuses, each with a coded JSON error:

* a ``Host`` header that is not one of the server's own names (DNS rebinding):
  421 ``request.host_forbidden``;
* an ``Origin`` header that is not one of the server's own origins — ``http://`` with an
  allowed host name and the port the request reached, compared exactly (another scheme or
  port is another site): 403 ``request.origin_forbidden`` (no CORS headers are ever sent, so
  no other site can read an answer either);
* a body over the limit, whether announced by ``Content-Length`` or streamed chunked:
  413 ``request.too_large``.

The body is read (bounded) before the route runs and replayed to it; later ``receive`` calls
go to the client, so a route still sees the client disconnect.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket for uvicorn (``port`` 0: any free one).

    Made with ``IPPROTO_TCP`` and ``TCP_NODELAY``, so every connection it accepts sends each
    SSE frame at once (asyncio sets no-delay only on sockets whose protocol is TCP; without it
    a keep-alive client waits ~40 ms on each response for a delayed ACK).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def error_body(code: str, message: str, hint: str | None = None) -> dict[str, Any]:
    """The failure envelope ``{ok: false, error: {...}}`` for a refusal made before routing."""
    error: dict[str, Any] = {
        "code": code,
        "category": "input" if code != "request.host_forbidden" else "permission",
        "message": message,
        "label_key": "error." + code,
        "retryable": False,
    }
    if hint:
        error["hint"] = hint
    return {"ok": False, "result": False, "msg": message, "errors": [code], "error": error}


async def send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    """Send a complete JSON response."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def host_name(value: str) -> str:
    """The host part of a ``Host`` header value (port removed, IPv6 brackets kept off)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HardeningMiddleware:
    """The checks above, in front of ``app``.

    Args:
        app: the ASGI app.
        allowed_hosts: the host names the server answers to (loopback names by default).
        max_body_bytes: the largest body accepted.
    """

    def __init__(self, app: ASGIApp, *, allowed_hosts: Iterable[str], max_body_bytes: int) -> None:
        self.app = app
        self.allowed = frozenset(h.strip("[]").lower() for h in allowed_hosts)
        self.max_body = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await send_json(send, refusal[0], refusal[1])
            return
        body = await self._read_body(scope, receive)
        if body is None:
            await send_json(
                send,
                413,
                error_body(
                    "request.too_large",
                    f"The request body is over {self.max_body} bytes.",
                    "Send a smaller request.",
                ),
            )
            return
        await self.app(scope, _replay(body, receive), _with_headers(send))

    def refusal(self, scope: Scope) -> tuple[int, dict[str, Any]] | None:
        """The status and body refusing this request's headers, or ``None``."""
        host = _header(scope, b"host")
        if host is None or host_name(host) not in self.allowed:
            return 421, error_body(
                "request.host_forbidden",
                "This server does not answer to that host name.",
                "Use the address `arxiu serve` printed.",
            )
        origin = _header(scope, b"origin")
        if origin is not None and not self._origin_allowed(origin, scope):
            return 403, error_body(
                "request.origin_forbidden",
                "Requests from other sites are refused.",
                "Call the API from a script or from the server's own pages.",
            )
        length = _header(scope, b"content-length")
        if length is not None:
            if not length.strip().isdigit():
                return 400, error_body("request.invalid", "The Content-Length is not a number.")
            if int(length) > self.max_body:
                return 413, error_body(
                    "request.too_large",
                    f"The request body is over {self.max_body} bytes.",
                    "Send a smaller request.",
                )
        return None

    def _origin_allowed(self, origin: str, scope: Scope) -> bool:
        """Whether ``origin`` is one of the server's own: ``http://NAME:PORT`` exactly, with an
        allowed host name and the port this request reached (the listening socket's)."""
        server = scope.get("server")
        port = server[1] if isinstance(server, tuple | list) and len(server) > 1 else None
        try:
            parts = urlsplit(origin)
            sent_port = parts.port or (80 if parts.scheme == "http" else None)
        except ValueError:
            return False
        return (
            parts.scheme == "http"
            and port is not None
            and sent_port == port
            and (parts.hostname or "") in self.allowed
            and "@" not in parts.netloc
            and not (parts.path or parts.query or parts.fragment)
        )

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        if scope.get("method") in {"GET", "HEAD", "OPTIONS"}:
            return b""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {bytes(k).lower() for k, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return sending


class RateLimiter:
    """At most ``attempts`` failures per key within ``window_s`` seconds (thread-safe)."""

    def __init__(
        self, attempts: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.attempts = attempts
        self.window = window_s
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str) -> deque[float]:
        now = self.clock()
        found = self._failures.setdefault(key, deque())
        while found and now - found[0] > self.window:
            found.popleft()
        return found

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may try again (0: it may now)."""
        with self._lock:
            if key not in self._failures:
                return 0.0
            recent = self._recent(key)
            if len(recent) < self.attempts:
                return 0.0
            return max(0.0, self.window - (self.clock() - recent[0]))

    def failed(self, key: str) -> None:
        """Record one failure for ``key``."""
        with self._lock:
            self._recent(key).append(self.clock())
            if len(self._failures) > 10_000:  # bounded memory under a flood of keys
                oldest = next(iter(self._failures))
                del self._failures[oldest]

    def succeeded(self, key: str) -> None:
        """Forget ``key``'s failures."""
        with self._lock:
            self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._failures)


NAME_FACTOR = 4
"""A user name's failures from every client together may reach this many times the per-client
limit before the name waits (for clients it has not logged in from)."""
MAX_KNOWN = 10_000


class LoginThrottle:
    """Failed logins, so that one attacker cannot lock other people out.

    The policy:

    * failures count per (client address, user name): ``attempts`` within ``window_s`` and that
      pair waits — the same client may still log in as another user, and the same user from
      another client;
    * failures of one user name from every client together: ``attempts * NAME_FACTOR`` within
      the window and the name waits too, except from a client address that logged in as that
      name before (a person at their usual workstation is never locked out by someone else);
    * there is no key per address alone: every loopback client is 127.0.0.1.
    """

    def __init__(
        self, attempts: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.pairs = RateLimiter(attempts, window_s, clock)
        self.names = RateLimiter(attempts * NAME_FACTOR, window_s, clock)
        self._known: dict[tuple[str, str], None] = {}
        self._lock = threading.Lock()

    def retry_after(self, address: str, name: str) -> float:
        """Seconds until ``address`` may try ``name`` again (0: it may now)."""
        pair = self.pairs.retry_after(f"{address}\0{name}")
        with self._lock:
            known = (address, name) in self._known
        return pair if known else max(pair, self.names.retry_after(name))

    def failed(self, address: str, name: str) -> None:
        """Record one failed login of ``name`` from ``address``."""
        self.pairs.failed(f"{address}\0{name}")
        self.names.failed(name)

    def succeeded(self, address: str, name: str) -> None:
        """``name`` logged in from ``address``: forget the pair's failures, remember the pair."""
        self.pairs.succeeded(f"{address}\0{name}")
        with self._lock:
            self._known.pop((address, name), None)
            self._known[(address, name)] = None
            while len(self._known) > MAX_KNOWN:
                del self._known[next(iter(self._known))]

    def size(self) -> int:
        """How many keys are held (bounded under a flood)."""
        with self._lock:
            return len(self.pairs) + len(self.names) + len(self._known)
