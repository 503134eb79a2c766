"""Loopback HTTP servers answering like Ollama and LM Studio (recorded reply shapes)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OLLAMA_TAGS = {
    "models": [
        {
            "name": "qwen2.5:7b",
            "model": "qwen2.5:7b",
            "size": 4683087332,
            "details": {
                "format": "gguf",
                "family": "qwen2",
                "parameter_size": "7.6B",
                "quantization_level": "Q4_K_M",
            },
        },
        {
            "name": "gemma:2b",
            "model": "gemma:2b",
            "details": {"family": "gemma", "parameter_size": "3B", "quantization_level": "Q4_0"},
        },
    ]
}
OLLAMA_SHOW = {
    "qwen2.5:7b": {
        "capabilities": ["completion", "tools"],
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
    },
    "gemma:2b": {
        "capabilities": ["completion"],
        "model_info": {"general.architecture": "gemma", "gemma.context_length": 8192},
    },
}
LMSTUDIO_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "meta-llama-3.1-8b-instruct",
            "object": "model",
            "type": "llm",
            "arch": "llama",
            "quantization": "Q4_K_M",
            "state": "not-loaded",
            "max_context_length": 131072,
            "capabilities": ["tool_use"],
        },
        {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "type": "embeddings"},
    ],
}
OPENAI_MODELS = {"object": "list", "data": [{"id": "smollm2-135m", "object": "model"}]}


def _handler(app: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            routes = {
                "ollama": {"/api/tags": OLLAMA_TAGS, "/v1/models": OPENAI_MODELS},
                "lmstudio": {"/api/v0/models": LMSTUDIO_MODELS, "/v1/models": OPENAI_MODELS},
                "openai": {"/v1/models": OPENAI_MODELS},
            }[app]
            if self.path in routes:
                self._send(200, routes[self.path])
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if app == "ollama" and self.path == "/api/show" and body.get("model") in OLLAMA_SHOW:
                self._send(200, OLLAMA_SHOW[body["model"]])
            else:
                self._send(404, {"error": "not found"})

    return Handler


@contextmanager
def fake_server(app: str) -> Iterator[int]:
    """Serve like ``app`` (``ollama``, ``lmstudio``, ``openai``) on a loopback port; yields it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(app))
    thread = threading.Thread(target=server.serve_forever, name="fake-model-server", daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
