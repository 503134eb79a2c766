"""The embedding child's lanes: a query is never queued behind indexing batches, and a batch
starts no new slice while a person waits."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from app.core.index import HashingEmbedder
from app.core.index.embed_worker import BATCH_SLICE, EmbedWorker
from app.core.index.foreground import Foreground
from tests.core.index.lane_embedders import PermitEmbedder
from tests.core.index.worker_embedders import QUICK


def semaphores() -> tuple[Any, Any]:
    ctx = multiprocessing.get_context("spawn")
    return ctx.Semaphore(0), ctx.Semaphore(0)


def test_a_query_is_answered_while_batches_fill_the_batch_lane() -> None:
    entered, gate = semaphores()
    worker = EmbedWorker([PermitEmbedder(entered, gate)])
    (remote,) = worker.wrap()
    pool = ThreadPoolExecutor(3)
    try:
        # as many batches as the child has query threads, and one more: with one shared pool
        # the query would wait behind them
        batches = [pool.submit(remote.embed_background, [f"batch {i}"]) for i in range(3)]
        assert entered.acquire(timeout=60)  # the first batch is in the child's batch lane
        query = remote.embed([QUICK])
        np.testing.assert_array_equal(query, HashingEmbedder(64).embed([QUICK]))
        assert not any(b.done() for b in batches)
        assert not entered.acquire(timeout=0)  # batches run one at a time, in their lane
        for _ in batches:
            gate.release()
        for i, batch in enumerate(batches):
            np.testing.assert_array_equal(
                batch.result(60), HashingEmbedder(64).embed([f"batch {i}"])
            )
    finally:
        for _ in range(3):
            gate.release()
        pool.shutdown(wait=True)
        worker.close()


def test_a_batch_starts_no_new_slice_while_a_person_waits() -> None:
    entered, gate = semaphores()
    worker = EmbedWorker([PermitEmbedder(entered, gate)])
    (remote,) = worker.wrap()
    foreground = Foreground(enabled=True)
    foreground.add_listener(worker.set_waiting)  # as Index wires it
    texts = [f"text {i} " + "word " * (i % 7) for i in range(2 * BATCH_SLICE + 1)]  # 3 slices
    result: Future[Any] = Future()

    def run() -> None:
        result.set_result(remote.embed_background(texts))

    thread = threading.Thread(target=run)
    try:
        remote.load()  # the child runs before the person arrives
        thread.start()
        assert entered.acquire(timeout=60)  # slice 1 is being encoded
        with foreground.hold():  # returns once the child has taken it in
            gate.release()  # slice 1 ends; slice 2 must wait for the person
            assert remote.embed([QUICK]).shape == (1, 64)  # the person's query is answered
            assert not entered.acquire(timeout=1.0)
            assert not result.done()
        assert entered.acquire(timeout=60)  # the person left: slice 2 starts
        gate.release()
        assert entered.acquire(timeout=60)
        gate.release()
        rows = result.result(60)
        np.testing.assert_array_equal(rows, HashingEmbedder(64).embed(texts))  # input order
    finally:
        for _ in range(3):
            gate.release()
        thread.join(60)
        worker.close()


def test_a_child_started_while_a_person_waits_holds_its_first_slice() -> None:
    entered, gate = semaphores()
    worker = EmbedWorker([PermitEmbedder(entered, gate)])
    (remote,) = worker.wrap()
    result: Future[Any] = Future()
    thread = threading.Thread(target=lambda: result.set_result(remote.embed_background(["a"])))
    try:
        worker.set_waiting(True)  # no child yet: the next one is told at its start
        thread.start()
        assert remote.embed([QUICK]).shape == (1, 64)
        assert not entered.acquire(timeout=1.0)
        worker.set_waiting(False)
        assert entered.acquire(timeout=60)
        gate.release()
        assert result.result(60).shape == (1, 64)
    finally:
        gate.release()
        thread.join(60)
        worker.close()
