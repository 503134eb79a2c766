"""The local worker's prefill on the real bundled model: one ``eval`` call, Stop inside it.

Bound under test: Stop pressed while the prompt is read ends the prefill within
:data:`STOP_BOUND_S` (llama.cpp polls the abort callback between graph nodes, a few
milliseconds apart for this model even on a loaded machine; the bound leaves room for a
scheduler that parks the process), whatever the batch size; the batches finished before it
stay cached, the unfinished one is dropped, and the next prefill resumes from there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.models.gguf import bundled_gguf
from app.core.models.local_worker import PromptAbort, _prefill
from tests.core.models.llama_fixtures import default_kernels_work

pytestmark = pytest.mark.slow

STOP_BOUND_S = 1.0
BATCH = 64


@pytest.fixture(scope="module")
def llm() -> Iterator[Any]:
    """The bundled model in this process, in small batches (several per prompt)."""
    from app.core.models.local_worker import disable_extra_buffers

    if not default_kernels_work():
        disable_extra_buffers()
    from llama_cpp import Llama

    model = Llama(model_path=str(bundled_gguf()), n_ctx=2048, n_batch=BATCH, verbose=False)
    yield model
    model.close()


def prompt(llm: Any, words: int) -> list[int]:
    text = " ".join(f"Record {i} describes a letter from the mayor." for i in range(words))
    tokens: list[int] = llm.tokenize(text.encode())
    return tokens


def first_token(llm: Any, tokens: list[int]) -> int:
    generator = llm.generate(tokens, temp=0.0)
    token = int(next(generator))
    generator.close()
    return token


def test_stop_ends_the_prefill_mid_batch_and_the_next_one_resumes(llm: Any) -> None:
    tokens = prompt(llm, 60)  # about 600 tokens: ten batches
    assert len(tokens) > 8 * BATCH
    llm.reset()
    stop = threading.Event()
    abort = PromptAbort(llm, stop)
    began = time.perf_counter()
    assert _prefill(llm, abort, tokens[: 2 * BATCH + 1]) == 0  # two batches, timed
    per_batch = (time.perf_counter() - began) / 2
    pressed: list[float] = []

    def press() -> None:
        pressed.append(time.perf_counter())
        stop.set()

    def press_in_a_later_batch() -> None:
        # pressed once a batch past the cached two has finished, i.e. early in the next one
        # (a timer set from the first batches' time lands anywhere on a loaded machine)
        deadline = time.perf_counter() + 60
        while llm.n_tokens < 3 * BATCH and time.perf_counter() < deadline:
            time.sleep(0.001)
        press()

    watcher = threading.Thread(target=press_in_a_later_batch)
    watcher.start()
    assert _prefill(llm, abort, tokens) is None
    latency = time.perf_counter() - pressed[0]
    watcher.join()
    kept = llm.n_tokens
    assert latency < STOP_BOUND_S, (latency, per_batch)
    assert latency < per_batch / 3 or per_batch < 0.1  # not at the end of its batch
    assert kept % BATCH == 0 and 2 * BATCH < kept < len(tokens) - 1  # finished batches stay
    stop.clear()
    assert _prefill(llm, abort, tokens) == kept  # resumes after what stayed cached
    assert llm.n_tokens == len(tokens) - 1
    resumed = first_token(llm, tokens)
    llm.reset()
    assert first_token(llm, tokens) == resumed  # the same KV cache as one uninterrupted read
    print(f"\nstop latency {latency * 1000:.1f} ms, one {BATCH}-token batch {per_batch:.2f} s")


def test_a_stop_before_the_prompt_leaves_the_cache_as_it_was(llm: Any) -> None:
    tokens = prompt(llm, 10)
    llm.reset()
    stop = threading.Event()
    abort = PromptAbort(llm, stop)
    assert _prefill(llm, abort, tokens) == 0
    stop.set()
    assert _prefill(llm, abort, [*tokens[:-1], 13, 14]) is None
    assert llm.n_tokens == len(tokens) - 1  # the shared prefix is still cached
    stop.clear()
    assert _prefill(llm, abort, tokens) == len(tokens) - 1
