"""Hardening: Host and Origin allow-lists, no CORS, bounded bodies and questions, disconnects."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.api.hardening import RateLimiter, host_name
from app.api.sse import with_heartbeats
from app.core.models.base import Message, ModelEvent, Stop, StreamOptions, TextDelta, ToolSpec
from app.core.models.scripted import ScriptedModel
from tests.api.conftest import API, Live, body, login, sse_events

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def http(live: Live) -> Iterator[httpx.Client]:
    """A client of the live server."""
    with httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.nip.io", "attacker:80", ""])
def test_a_foreign_host_header_is_refused_before_routing(http: httpx.Client, host: str) -> None:
    response = http.post(API, content=body("agent_models"), headers={**JSON, "Host": host})
    assert response.status_code in {400, 421}
    if response.status_code == 421:
        assert response.json()["error"]["code"] == "request.host_forbidden"


def test_loopback_host_names_with_ports_are_accepted(http: httpx.Client, live: Live) -> None:
    port = live.url.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        response = http.post(API, content=body("agent_models"), headers={**JSON, "Host": host})
        assert response.status_code == 401  # past the host check: login needed


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1.evil.io"])
def test_a_foreign_origin_is_refused_and_no_cors_header_is_ever_sent(
    http: httpx.Client, origin: str
) -> None:
    response = http.post(
        API,
        content=body("login", {"username": "reader", "auth": "pw-reader"}, "dd_utils_api"),
        headers={**JSON, "Origin": origin},
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "request.origin_forbidden"
    assert "access-control-allow-origin" not in response.headers
    preflight = http.options(
        API, headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_the_servers_own_origin_may_log_in(http: httpx.Client, live: Live) -> None:
    response = http.post(
        API,
        content=body("login", {"username": "reader", "auth": "pw-reader"}, "dd_utils_api"),
        headers={**JSON, "Origin": live.url},
    )
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


def test_bodies_over_the_limit_are_refused_announced_or_chunked(
    http: httpx.Client, ctx: ApiContext
) -> None:
    big = b"{" + b" " * (ctx.limits.max_body_bytes + 10) + b"}"
    announced = http.post(API, content=big, headers=JSON)
    assert announced.status_code == 413
    assert announced.json()["error"]["code"] == "request.too_large"

    def chunks() -> Iterator[bytes]:
        for _ in range(ctx.limits.max_body_bytes // 1024 + 2):
            yield b" " * 1024

    chunked = http.post(API, content=chunks(), headers=JSON)
    assert chunked.status_code == 413
    assert chunked.json()["error"]["code"] == "request.too_large"


def test_unknown_paths_and_methods_get_coded_errors(http: httpx.Client) -> None:
    missing = http.get("/nothing/here")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "request.not_found"
    wrong = http.get(API)
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "request.method_not_allowed"
    assert wrong.headers["x-content-type-options"] == "nosniff"


def test_the_rate_limiter_forgets_after_its_window() -> None:
    now = [0.0]
    limiter = RateLimiter(2, 10.0, clock=lambda: now[0])
    limiter.failed("a")
    assert limiter.retry_after("a") == 0
    limiter.failed("a")
    assert limiter.retry_after("a") == pytest.approx(10.0)
    now[0] = 10.5
    assert limiter.retry_after("a") == 0


def test_host_names_are_parsed_without_their_ports() -> None:
    assert host_name("LocalHost:8765") == "localhost"
    assert host_name("[::1]:80") == "::1"
    assert host_name("127.0.0.1") == "127.0.0.1"


@dataclass
class EndlessModel(ScriptedModel):
    """A model that streams until it is closed (and records that it was)."""

    chunks: int = 0
    closed_early: threading.Event = field(default_factory=threading.Event)

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> AsyncIterator[ModelEvent]:
        try:
            for _ in range(100_000):
                await asyncio.sleep(0.005)
                self.chunks += 1
                yield TextDelta("word ")
            yield Stop("end_turn")
        finally:
            if self.chunks < 100_000:
                self.closed_early.set()


def test_a_client_that_disconnects_mid_stream_frees_the_run(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    endless = EndlessModel(id="local")
    models["local"] = endless
    csrf = login(http, "reader")
    with http.stream(
        "POST",
        API,
        content=body("agent_chat_stream", {"question": "talk forever"}),
        headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
    ) as response:
        for line in response.iter_lines():
            if line.startswith("event: text"):
                break
    assert endless.closed_early.wait(timeout=15)
    session = next(iter(ctx._sessions.values()))
    deadline = time.monotonic() + 15
    while session._runs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert session._runs == {}
    produced = endless.chunks
    time.sleep(0.2)
    assert endless.chunks == produced  # nothing runs any more


def test_idle_streams_carry_ping_heartbeats(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    class Slow(ScriptedModel):
        async def stream(
            self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
        ) -> AsyncIterator[ModelEvent]:
            await asyncio.sleep(0.3)  # several heartbeat intervals of silence (0.05 s)
            yield TextDelta("late answer")
            yield Stop("end_turn")

    models["local"] = Slow(id="local")
    csrf = login(http, "reader")
    response = http.post(
        API,
        content=body("agent_chat_stream", {"question": "slow"}),
        headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
    )
    assert ": ping\n\n" in response.text
    events = sse_events(response.text)
    assert events[-1][0] == "final" and events[-1][1]["answer"] == "late answer"


async def test_with_heartbeats_closes_its_source_when_the_consumer_stops() -> None:
    closed = asyncio.Event()

    async def source() -> AsyncIterator[int]:
        try:
            for n in range(1000):
                await asyncio.sleep(0.01)
                yield n
        finally:
            closed.set()

    stream = with_heartbeats(source(), 0.001)
    seen: list[int | None] = []
    async for item in stream:
        seen.append(item)
        if len(seen) == 5:
            break
    await stream.aclose()
    assert closed.is_set()
    assert None in seen  # a heartbeat came before the first slow item


def test_a_client_that_leaves_a_non_streamed_chat_frees_the_run(
    live: Live, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    endless = EndlessModel(id="local")
    models["local"] = endless
    with httpx.Client(base_url=live.url, timeout=30) as http:
        csrf = login(http, "reader")
        with pytest.raises(httpx.ReadTimeout):
            http.post(
                API,
                content=body("agent_chat", {"question": "talk forever"}),
                headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
                timeout=httpx.Timeout(30, read=1.0),
            )
    assert endless.closed_early.wait(timeout=15)
    session = next(iter(ctx._sessions.values()))
    deadline = time.monotonic() + 15
    while session._runs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert session._runs == {}


@pytest.mark.parametrize(
    "make",
    [
        lambda port: "http://localhost:1",
        lambda port: f"https://localhost:{port}",
        lambda port: f"https://127.0.0.1:{port}",
        lambda port: f"http://127.0.0.1:{port + 1}",
        lambda port: "http://localhost",
        lambda port: f"ftp://localhost:{port}",
        lambda port: f"http://user@localhost:{port}",
        lambda port: f"http://localhost:{port}/page",
    ],
)
def test_an_origin_of_another_scheme_or_port_is_refused(
    http: httpx.Client, live: Live, make: Any
) -> None:
    """Regression: the Origin check compared the host only, so any local page could log in."""
    origin = make(int(live.url.rsplit(":", 1)[1]))
    response = http.post(
        API,
        content=body("login", {"username": "reader", "auth": "pw-reader"}, "dd_utils_api"),
        headers={**JSON, "Origin": origin},
    )
    assert response.status_code == 403, origin
    assert response.json()["error"]["code"] == "request.origin_forbidden"


def test_the_servers_own_origins_and_allowed_hosts_at_its_port_are_accepted(
    ctx: ApiContext,
) -> None:
    from dataclasses import replace as _replace

    from app.api.server import create_app
    from tests.api.conftest import start_server, stop_server

    live = start_server(create_app(_replace(ctx, allowed_hosts=ctx.allowed_hosts | {"arxiu.lan"})))
    port = int(live.url.rsplit(":", 1)[1])
    try:
        with httpx.Client(base_url=live.url, timeout=30) as client:
            for origin, host, status in (
                (f"http://127.0.0.1:{port}", f"127.0.0.1:{port}", 200),
                (f"http://localhost:{port}", f"localhost:{port}", 200),
                (f"http://arxiu.lan:{port}", f"arxiu.lan:{port}", 200),
                ("http://arxiu.lan:1", f"arxiu.lan:{port}", 403),
                (f"https://arxiu.lan:{port}", f"arxiu.lan:{port}", 403),
            ):
                response = client.post(
                    API,
                    content=body(
                        "login", {"username": "reader", "auth": "pw-reader"}, "dd_utils_api"
                    ),
                    headers={**JSON, "Origin": origin, "Host": host},
                )
                assert response.status_code == status, (origin, response.text)
    finally:
        stop_server(live)
