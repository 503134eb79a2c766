"""The Stop flag calls its listeners once, from the thread that sets it, and wakes a loop."""

from __future__ import annotations

import asyncio
import threading

from app.core.models.stop_signal import StopSignal


def test_set_calls_each_listener_once_and_only_inside_its_block() -> None:
    stop = StopSignal()
    calls: list[str] = []
    with stop.listening(lambda: calls.append("a")):
        stop.set()
        stop.set()  # a second press calls nobody again
    assert calls == ["a"] and stop.is_set()
    with stop.listening(lambda: calls.append("late")):  # set already: called at once
        pass
    assert calls == ["a", "late"]
    other = StopSignal()
    with other.listening(lambda: calls.append("gone")):
        pass
    other.set()  # the block has ended: nobody listens
    assert calls == ["a", "late"]


def test_a_listener_that_fails_does_not_reach_the_one_who_pressed_stop() -> None:
    stop = StopSignal()
    calls: list[str] = []

    def broken() -> None:
        raise RuntimeError("listener bug")

    with stop.listening(broken), stop.listening(lambda: calls.append("next")):
        stop.set()
    assert calls == ["next"]


async def test_its_future_is_done_when_another_thread_sets_it() -> None:
    stop = StopSignal()
    with stop.future() as stopped:
        threading.Timer(0.05, stop.set).start()
        await asyncio.wait_for(stopped, timeout=5)
    assert stopped.done() and stopped.exception() is None
