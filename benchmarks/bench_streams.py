"""Stream-bounds benchmark: the bounded SSE reader against httpx's own line reader.

Replays one chat completions stream of N text chunks (``httpx.MockTransport``, no network) and
prints, measured in the same run:

* raw: ``response.aiter_lines()`` plus ``json.loads`` of each ``data:`` line (the unbounded
  reader the providers used before);
* bounded: :class:`~app.core.models.openai_compatible.OpenAICompatibleModel` streaming the same
  body (byte line splitting with caps, SSE parsing, the turn clock and idle timer, events),
  without and with a Stop event (the agent loop always passes one);

with chunks per second and the ratio bounded/raw time (the provider also builds model events,
so the ratio bounds the cost of the limits from above).

Run: ``python benchmarks/bench_streams.py`` (``--chunks 50000 --runs 5``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from app.core.models.base import Message, StreamOptions  # noqa: E402
from app.core.models.catalog import ModelEntry  # noqa: E402
from app.core.models.openai_compatible import OpenAICompatibleModel  # noqa: E402

ENTRY = ModelEntry(
    id="b", label="b", provider="openai_compatible", model="m", endpoint="http://bench/v1"
)


def body(chunks: int) -> bytes:
    delta = {"choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}]}
    line = f"data: {json.dumps(delta)}\n\n".encode()
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return line * chunks + f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode()


def client(data: bytes) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=data, headers={"content-type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def raw(data: bytes) -> float:
    async with client(data) as http:
        began = time.perf_counter()
        async with http.stream("POST", "http://bench/v1/chat/completions") as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
        return time.perf_counter() - began


async def bounded(data: bytes, *, with_stop: bool = False) -> float:
    http = client(data)
    model = OpenAICompatibleModel(ENTRY, client=http, retry_delays=())
    options = StreamOptions(stop_event=threading.Event() if with_stop else None)
    began = time.perf_counter()
    async for _ in model.stream([Message("user", "hi")], [], options):
        pass
    elapsed = time.perf_counter() - began
    await http.aclose()
    return elapsed


async def main(chunks: int, runs: int) -> None:
    data = body(chunks)
    raw_times = [await raw(data) for _ in range(runs)]
    bounded_times = [await bounded(data) for _ in range(runs)]
    stop_times = [await bounded(data, with_stop=True) for _ in range(runs)]
    raw_s, bounded_s = statistics.median(raw_times), statistics.median(bounded_times)
    stop_s = statistics.median(stop_times)
    print(f"stream of {chunks} chunks ({len(data) / 1e6:.1f} MB), median of {runs} runs")
    print(f"raw httpx aiter_lines + json: {raw_s:.3f} s ({chunks / raw_s:,.0f} chunks/s)")
    print(f"bounded provider stream:      {bounded_s:.3f} s ({chunks / bounded_s:,.0f} chunks/s)")
    print(f"ratio bounded/raw:            {bounded_s / raw_s:.2f}")
    print(f"with a Stop event (the agent loop's case): {stop_s:.3f} s, ratio {stop_s / raw_s:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.chunks, args.runs))
