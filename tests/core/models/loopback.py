"""A real HTTP server on 127.0.0.1 that answers every POST with a scripted streaming body.

Used to play misbehaving model servers: keep-alives forever, text trickled forever, one line
that never ends, malformed events. Forever bodies stop after :data:`SAFETY_S` seconds so that
code without bounds fails its test instead of hanging the suite.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

SAFETY_S = 60.0
Body = Callable[[threading.Event], Iterator[bytes]]


class LoopbackServer:
    """Serve ``body(stopping)`` to every POST; counts the bytes written and the requests.

    Attributes:
        sent: bytes the server managed to write (what the client read, plus socket buffers).
        requests: how many POSTs arrived.
        url: the ``http://127.0.0.1:PORT/v1`` base URL.
    """

    def __init__(self, body: Body, *, status: int = 200) -> None:
        self.body = body
        self.status = status
        self.sent = 0
        self.requests = 0
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with server._lock:
                    server.requests += 1
                self.send_response(server.status)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                try:
                    for chunk in server.body(server.stopping):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        with server._lock:
                            server.sent += len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def forever(chunk: bytes, interval: float, *, first: bytes = b"") -> Body:
    """A body sending ``first``, then ``chunk`` every ``interval`` seconds (until SAFETY_S)."""

    def body(stopping: threading.Event) -> Iterator[bytes]:
        if first:
            yield first
        end = time.monotonic() + SAFETY_S
        while not stopping.is_set() and time.monotonic() < end:
            yield chunk
            stopping.wait(interval)

    return body


def fixed(*chunks: bytes) -> Body:
    """A body sending ``chunks`` and ending."""

    def body(stopping: threading.Event) -> Iterator[bytes]:
        yield from chunks

    return body


def endless_line(total: int, block: int = 1 << 20) -> Body:
    """``total`` bytes of ``data: xxx…`` without a single newline, ``block`` bytes at a time."""

    def body(stopping: threading.Event) -> Iterator[bytes]:
        piece = b"x" * block
        yield b"data: "
        for _ in range(total // block):
            if stopping.is_set():
                return
            yield piece

    return body


def openai_chunk(text: str) -> bytes:
    """One chat completions text delta as an SSE event."""
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def openai_end(reason: str = "stop") -> bytes:
    """The finishing chunk and ``[DONE]``."""
    chunk = {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


def openai_catalog(url: str, timeout_s: float, model_id: str = "stuck") -> dict[str, Any]:
    """A ``models.json`` with one OpenAI-compatible entry at ``url``."""
    entry = {
        "id": model_id,
        "label": "Loopback server",
        "provider": "openai_compatible",
        "model": "m",
        "endpoint": url,
        "egress": "local",
        "timeout_s": timeout_s,
        "default": True,
    }
    return {"models": [entry]}
