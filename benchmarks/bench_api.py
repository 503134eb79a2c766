"""API benchmark: SSE over ``arxiu serve`` against the core in-process, and concurrency.

Prints, for the same scripted model (the ``scripted`` provider's deterministic reply: ``start``,
``iteration``, ~28 ``text`` frames, ``final``), all measured in the same run:

* time to first event (TTFE) and per-event time (after the first) of a run through
  ``AssistantSession.chat`` in this process, and of the same run streamed by
  ``agent_chat_stream`` from an ``arxiu serve`` subprocess over loopback HTTP (the client:
  httpx in this process), with their ratios;
* for N = 1, 2, 4, ... concurrent streaming clients, the p50/p95 TTFE, and the largest N that
  keeps p95 TTFE under 200 ms.

Run: ``python benchmarks/bench_api.py`` (``--runs 200`` sequential runs, ``--max-clients 256``).
The client and the server share this machine's cores, so concurrency figures are a floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from app.api.users import UserStore  # noqa: E402
from app.core.agent.request import ChatRequest  # noqa: E402
from app.core.archive.demo import create_demo_archive  # noqa: E402
from app.core.index.embedders import HashingEmbedder  # noqa: E402
from app.core.index.service import Index  # noqa: E402
from app.core.models.catalog import catalog_from_data  # noqa: E402
from app.core.session import AssistantSession  # noqa: E402

QUESTION = "Which interviews talk about leaving home when the reservoir flooded the valley? " * 3
CATALOG = [
    {"id": "bench", "label": "Scripted", "provider": "scripted", "model": "s", "default": True}
]
TTFE_BUDGET_S = 0.200


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def core_runs(session: AssistantSession, runs: int) -> tuple[list[float], list[float], int]:
    """TTFE and per-event seconds of ``runs`` in-process runs; and the events per run."""
    ttfe, per_event, count = [], [], 0
    for _ in range(runs):
        start = time.perf_counter()
        first, count = 0.0, 0
        async for _event in await session.chat(ChatRequest(QUESTION)):
            count += 1
            if count == 1:
                first = time.perf_counter() - start
        ttfe.append(first)
        per_event.append((time.perf_counter() - start - first) / max(1, count - 1))
    return ttfe, per_event, count


def nodelay(limits: httpx.Limits | None = None) -> httpx.AsyncHTTPTransport:
    """A transport whose sockets send at once (TCP_NODELAY), as :class:`DedaloClient` does."""
    return httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        limits=limits or httpx.Limits(),
    )


def body(action: str, options: dict[str, Any], dd_api: str = "dd_mcp_api") -> bytes:
    """A Dédalo call."""
    return json.dumps({"action": action, "dd_api": dd_api, "options": options}).encode()


async def login(http: httpx.AsyncClient, api: str) -> str:
    """Log the benchmark user in; the CSRF token."""
    options = {"username": "bench", "auth": "bench-pw"}
    response = await http.post(api, content=body("login", options, "dd_utils_api"))
    response.raise_for_status()
    return str(response.json()["csrf_token"])


async def one_stream(http: httpx.AsyncClient, api: str, csrf: str) -> tuple[float, float, int]:
    """TTFE, total seconds and event count of one streamed run."""
    headers = {"Content-Type": "application/json", "X-Dedalo-Csrf-Token": csrf}
    start = time.perf_counter()
    first, count = 0.0, 0
    content = body("agent_chat_stream", {"question": QUESTION})
    async with http.stream("POST", api, content=content, headers=headers) as response:
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                count += 1
                if count == 1:
                    first = time.perf_counter() - start
    return first, time.perf_counter() - start, count


async def http_runs(api: str, runs: int) -> tuple[list[float], list[float], int]:
    """TTFE and per-event seconds of ``runs`` sequential streamed runs."""
    async with httpx.AsyncClient(timeout=60, transport=nodelay()) as http:
        csrf = await login(http, api)
        ttfe, per_event, count = [], [], 0
        for _ in range(runs):
            first, total, count = await one_stream(http, api, csrf)
            ttfe.append(first)
            per_event.append((total - first) / max(1, count - 1))
    return ttfe, per_event, count


async def concurrent(api: str, clients: int, rounds: int) -> list[float]:
    """TTFE of every stream when ``clients`` clients each stream ``rounds`` runs at once."""
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(timeout=120, transport=nodelay(limits)) as http:
        csrf = await login(http, api)

        async def client() -> list[float]:
            return [(await one_stream(http, api, csrf))[0] for _ in range(rounds)]

        results = await asyncio.gather(*(client() for _ in range(clients)))
    return [t for found in results for t in found]


def start_server(home: Path, archive: Path) -> tuple[subprocess.Popen[str], str]:
    """``arxiu serve`` on a free loopback port; the process and the Dédalo URL."""
    env = {**os.environ, "ARXIU_HOME": str(home), "ARXIU_EMBEDDING_MODEL": "hashing"}
    command = [sys.executable, "-m", "app", "serve", "--port", "0", "--archive", str(archive)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=REPO
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("Arxiu API at "):
        process.kill()
        raise SystemExit(f"arxiu serve did not start: {line!r}")
    return process, line.split(" at ", 1)[1].strip()


def report_sequential(core: tuple[list[float], list[float], int], api: Any) -> None:
    """Print the in-process vs HTTP figures."""
    c_ttfe, c_event = statistics.median(core[0]), statistics.median(core[1])
    h_ttfe, h_event = statistics.median(api[0]), statistics.median(api[1])
    print(f"events per run: core {core[2]}, SSE {api[2]}")
    print(
        f"TTFE median: core {c_ttfe * 1e3:.3f} ms, SSE {h_ttfe * 1e3:.3f} ms "
        f"(ratio {h_ttfe / c_ttfe:.1f}x; p95 core {pct(core[0], 0.95) * 1e3:.3f} ms, "
        f"SSE {pct(api[0], 0.95) * 1e3:.3f} ms)"
    )
    print(
        f"per-event median: core {c_event * 1e6:.1f} us, SSE {h_event * 1e6:.1f} us "
        f"(ratio {h_event / c_event:.2f}x; overhead {(h_event - c_event) * 1e6:.1f} us/event)"
    )


async def ramp(api: str, max_clients: int, rounds: int) -> None:
    """Concurrent clients until p95 TTFE passes the budget."""
    best, clients = 0, 1
    while clients <= max_clients:
        ttfe = await concurrent(api, clients, rounds)
        p50, p95 = pct(ttfe, 0.5), pct(ttfe, 0.95)
        print(f"{clients:4d} clients: TTFE p50 {p50 * 1e3:7.1f} ms, p95 {p95 * 1e3:7.1f} ms")
        if p95 >= TTFE_BUDGET_S:
            break
        best, clients = clients, clients * 2
    print(
        f"concurrent streaming clients with p95 TTFE < 200 ms: {best}"
        + (" (the ramp's limit)" if clients > max_clients else "")
    )


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--max-clients", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3, help="streams per concurrent client")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        home, folder = Path(work) / "home", Path(work) / "demo"
        home.mkdir()
        (home / "models.json").write_text(json.dumps({"models": CATALOG}), encoding="utf-8")
        UserStore(home / "api_users.json").add("bench", "bench-pw")
        archive = create_demo_archive(folder)
        index = Index(archive, HashingEmbedder())
        index.index_now()
        session = AssistantSession(archive, catalog_from_data(CATALOG), index)
        process, api = start_server(home, folder)
        try:
            asyncio.run(core_runs(session, 10))  # warm up both sides
            asyncio.run(http_runs(api, 10))
            core = asyncio.run(core_runs(session, args.runs))
            over_http = asyncio.run(http_runs(api, args.runs))
            report_sequential(core, over_http)
            asyncio.run(ramp(api, args.max_clients, args.rounds))
        finally:
            process.terminate()
            process.wait(30)
            index.close()
            archive.close()


if __name__ == "__main__":
    main()
