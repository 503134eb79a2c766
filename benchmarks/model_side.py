"""One side of ``bench_models.py --compare-tree``: the local provider of one source tree, timed.

Run as a script with the tree's root on ``PYTHONPATH`` (``app`` is imported from there, and the
spawned worker process inherits the same path), it reads one JSON request on stdin::

    {"messages": [[role, content], ...], "evict": [[role, content], ...],
     "max_tokens": 128, "warm": 3, "long": text, "story": [[role, content], ...]}

and prints one JSON line: where ``app`` came from, the fresh time to first token (from making
the model: worker spawn, model load, prompt, first token), the warm ones (the same prompt again,
its prefix in the KV cache), the cold ones (a loaded worker whose cache an unrelated prompt
evicted), the milliseconds per streamed piece of each full reply, the replies' texts, and how
long a reply takes to end once Stop is pressed from another thread (as the window's Stop button
does): while a long prompt (``long``, after a fresh nonce) is being read, and while a long reply
(``story``, its prompt cached) is being sampled.

It uses only what both trees offer (``LocalLlamaModel(builtin_local())``, ``stream``,
``StreamOptions``) and passes the tree's own Stop flag, as a real run does. Greedy
decoding, so both trees should produce the same text.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any


def stop_flag() -> threading.Event:
    """The Stop flag a real run of this tree passes: its ``StopSignal`` (an ``Event`` that
    wakes the model's wait) where the tree has one, a plain ``Event`` in older trees."""
    try:
        from app.core.models.stop_signal import StopSignal
    except ImportError:
        return threading.Event()
    return StopSignal()


@dataclass
class Reply:
    """One streamed reply: seconds to its first piece, the pieces' times, the text."""

    ttft: float
    stamps: list[float]
    text: str

    @property
    def ms_per_piece(self) -> float:
        """Milliseconds from the first piece to the last, per piece after the first."""
        if len(self.stamps) < 2:
            return 0.0
        return 1000 * (self.stamps[-1] - self.stamps[0]) / (len(self.stamps) - 1)


@dataclass
class SideResult:
    """What one side process measured."""

    app: str
    fresh_ttft: float = 0.0
    warm_ttft: list[float] = field(default_factory=list)
    cold_ttft: list[float] = field(default_factory=list)
    ms_per_piece: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    stop_prompt: list[float] = field(default_factory=list)
    stop_reply: list[float] = field(default_factory=list)

    def add(self, reply: Reply) -> None:
        """Keep a full reply's decode speed and text."""
        self.ms_per_piece.append(reply.ms_per_piece)
        self.texts.append(reply.text)


async def timed(model: Any, messages: list[Any], max_tokens: int, started: float) -> Reply:
    """Stream one reply; its TTFT counts from ``started``."""
    from app.core.models.base import StreamOptions, TextDelta

    options = StreamOptions(max_tokens=max_tokens, temperature=0.0, stop_event=stop_flag())
    stamps: list[float] = []
    parts: list[str] = []
    async for event in model.stream(messages, [], options):
        if isinstance(event, TextDelta) and event.text:
            stamps.append(time.perf_counter())
            parts.append(event.text)
    first = stamps[0] if stamps else time.perf_counter()
    return Reply(first - started, stamps, "".join(parts))


async def stop_latency(model: Any, messages: list[Any], after_s: float) -> float:
    """Seconds from Stop, pressed on a timer thread ``after_s`` into the reply, to its end."""
    from app.core.models.base import Stop, StreamOptions

    stop = stop_flag()
    pressed: list[float] = []

    def press() -> None:
        pressed.append(time.perf_counter())
        stop.set()

    options = StreamOptions(max_tokens=400, temperature=0.0, stop_event=stop)
    timer = threading.Timer(after_s, press)
    timer.start()
    last: Any = None
    async for event in model.stream(messages, [], options):
        last = event
    ended = time.perf_counter()
    timer.cancel()
    if not pressed or last != Stop("stopped"):
        raise SystemExit(f"the reply ended before Stop ({last!r})")
    return ended - pressed[0]


async def stops(model: Any, request: dict[str, Any], result: SideResult) -> None:
    """Stop while a fresh long prompt is read, then while a cached prompt's reply is sampled."""
    from app.core.models.base import Message

    story = [Message(role, content) for role, content in request["story"]]
    await timed(model, story, 1, time.perf_counter())  # its prompt into the KV cache
    for nonce in range(int(request["warm"])):
        long = [Message("user", f"Session {time.time_ns()}-{nonce}. {request['long']}")]
        result.stop_prompt.append(await stop_latency(model, long, 0.3))
        await timed(model, story, 1, time.perf_counter())
        result.stop_reply.append(await stop_latency(model, story, 0.3))


async def measure(request: dict[str, Any]) -> SideResult:
    """Fresh, then ``warm`` × (warm, cold) replies to the request's messages."""
    import app
    from app.core.models.base import Message
    from app.core.models.catalog import builtin_local
    from app.core.models.local_llama import LocalLlamaModel

    messages = [Message(role, content) for role, content in request["messages"]]
    evict = [Message(role, content) for role, content in request["evict"]]
    limit = int(request["max_tokens"])
    result = SideResult(str(app.__file__))
    started = time.perf_counter()
    model = LocalLlamaModel(builtin_local())
    try:
        fresh = await timed(model, messages, limit, started)
        result.fresh_ttft = fresh.ttft
        result.add(fresh)
        for _ in range(int(request["warm"])):
            warm = await timed(model, messages, limit, time.perf_counter())
            result.warm_ttft.append(warm.ttft)
            result.add(warm)
            await timed(model, evict, 1, time.perf_counter())
            cold = await timed(model, messages, limit, time.perf_counter())
            result.cold_ttft.append(cold.ttft)
            result.add(cold)
        await stops(model, request, result)
    finally:
        await model.aclose()
    return result


def main() -> None:
    """Read the request on stdin, print the result as one JSON line."""
    request = json.loads(sys.stdin.read())
    result = asyncio.run(measure(request))
    print(json.dumps(result.__dict__))


if __name__ == "__main__":
    main()
