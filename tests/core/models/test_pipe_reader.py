"""The local worker's pipe protocol: typed messages over a real pipe, read by a blocking thread.

A real ``multiprocessing`` pipe and real threads (no llama.cpp here): what one end sends, the
reader hands to the awaiting coroutine as soon as it lands, in order, across event loops, and
the pipe's end is a :class:`PipeClosed`, never a hang.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
import threading
import time
from multiprocessing.connection import Connection

import pytest

from app.core.errors import ModelError
from app.core.models.base import Message, ToolCall, ToolSpec, Usage
from app.core.models.local_messages import (
    Close,
    Done,
    Failed,
    Generate,
    Ready,
    Sampling,
    Stopped,
    Text,
    WorkerConfig,
)
from app.core.models.pipe_reader import PIPE_CLOSED, PipeClosed, PipeReader, Received

TOOL = ToolSpec("lookup", "Look up.", {"type": "object", "properties": {"q": {"type": "string"}}})


def _pipe() -> tuple[Connection, Connection]:
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    return ours, theirs


def test_every_message_kind_crosses_a_pipe_unchanged() -> None:
    call = ToolCall("c1", "lookup", {"q": "flood"})
    conversation = (
        Message("system", "Rules."),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "found", tool_call_id="c1", name="lookup"),
    )
    messages = [
        WorkerConfig("/models/smol.gguf", 2048, 4, extra_buffers=False),
        Generate(conversation, (TOOL,), native=True, sampling=Sampling(top_k=20)),
        Close(),
        Ready(8192, tool_template=True),
        Text("Hola"),
        Done("stop", Usage(10, 2, 8), 0.25),
        Stopped(Usage(10), "prompt"),
        Failed("ai.context_overflow", "Too long.", {"n_ctx": 256}),
    ]
    ours, theirs = _pipe()
    with ours, theirs:
        for message in messages:
            theirs.send(message)
            assert ours.recv() == message
    assert pickle.loads(pickle.dumps(PIPE_CLOSED)) == PipeClosed()


def test_sampling_keeps_what_is_set_and_refuses_what_is_not_a_number() -> None:
    base = Sampling(repeat_penalty=1.15)
    assert base.kwargs() == {"repeat_penalty": 1.15}
    tuned = base.updated({"top_k": 20, "min_p": 0.1, "unrelated": "x"})
    assert tuned.kwargs() == {"top_k": 20, "min_p": 0.1, "repeat_penalty": 1.15}
    assert isinstance(tuned.top_k, int)
    with pytest.raises(ModelError) as caught:
        base.updated({"top_p": "high"})
    assert caught.value.code == "ai.model_options_invalid"
    with pytest.raises(ModelError):
        base.updated({"repeat_penalty": True})


async def test_a_message_wakes_the_waiting_coroutine_at_once() -> None:
    ours, theirs = _pipe()
    reader = PipeReader(ours, "test-reader")
    sent: list[float] = []

    def send_later() -> None:
        time.sleep(0.2)
        sent.append(time.perf_counter())
        theirs.send(Text("one"))

    sender = threading.Thread(target=send_later)
    sender.start()
    batch = await reader.next_batch()  # no timeout: nothing but the message can end this wait
    woke = time.perf_counter() - sent[0]
    sender.join()
    assert batch == [Text("one")]
    assert await reader.next_batch(timeout=0.05) == []  # nothing more came
    theirs.close()
    assert await reader.next_batch(timeout=30) == [PIPE_CLOSED]
    reader.join(5)
    assert not reader.alive
    ours.close()
    assert woke < 1.0, woke  # woken by the message, not a poll (one scheduler slice at most)


async def test_messages_arrive_in_order_and_in_batches() -> None:
    ours, theirs = _pipe()
    reader = PipeReader(ours, "test-reader")
    for number in range(200):
        theirs.send(Text(str(number)))
    theirs.send(Done("length", Usage(5, 200), 0.1))
    theirs.close()
    received: list[Received] = []
    async with asyncio.timeout(30):
        while not received or received[-1] is not PIPE_CLOSED:
            received.extend(await reader.next_batch())
    texts = [m.piece for m in received if isinstance(m, Text)]
    assert texts == [str(number) for number in range(200)]
    assert isinstance(received[-2], Done)
    reader.join(5)
    ours.close()


def test_what_one_event_loop_left_unread_the_next_one_gets() -> None:
    ours, theirs = _pipe()
    reader = PipeReader(ours, "test-reader")

    async def first() -> list[Received]:
        theirs.send(Text("a"))
        batch = await reader.next_batch(timeout=30)
        theirs.send(Text("b"))  # arrives after this loop stopped reading
        theirs.send(Stopped(Usage(3), "reply"))
        await asyncio.sleep(0.2)
        return batch

    async def second() -> list[Received]:
        out: list[Received] = []
        while len(out) < 2:
            out.extend(await reader.next_batch(timeout=30))
        return out

    assert asyncio.run(first()) == [Text("a")]
    assert asyncio.run(second()) == [Text("b"), Stopped(Usage(3), "reply")]
    theirs.close()
    reader.join(5)
    ours.close()


async def test_a_cancelled_wait_leaves_the_message_for_the_next() -> None:
    ours, theirs = _pipe()
    reader = PipeReader(ours, "test-reader")
    waiting = asyncio.create_task(reader.next_batch())
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    theirs.send(Text("kept"))
    assert await reader.next_batch(timeout=30) == [Text("kept")]
    theirs.close()
    reader.join(5)
    ours.close()
