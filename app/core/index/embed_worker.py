"""Embedding in a child process, so that the desktop app's own process never runs model code.

Importing torch, loading a model and some C calls inside an encode hold the GIL for long
stretches; in the app's process they stalled the GUI thread (247 ms measured while indexing
with both models loaded). :class:`EmbedWorker` runs the models in one child process started
with the ``spawn`` method (each model loaded once there, on first use); :meth:`EmbedWorker.wrap`
gives, for each embedder, a :class:`WorkerEmbedder` with the same ``model_id``, ``dim`` and
``languages`` whose :meth:`~WorkerEmbedder.embed` sends the texts through a pipe and waits for
the float32 rows (the waiting thread releases the GIL).

Protocol (``multiprocessing`` pipe). Parent → child: ``(id, "load", model_id)``,
``(id, "embed", (model_id, texts))`` or ``(0, "close", None)``. Child → parent, for each request:
``(id, "ok", payload)`` (the vector length for a load, the rows for an embed) or
``(id, "error", {code, message})``. Requests are served on a small thread pool, so a search's
query is embedded while an indexing batch is in flight.

A worker that dies (killed, out of memory) fails the requests in flight with
``index.worker_died``; the next request starts a fresh one. Nothing is lost: the indexer
commits a batch only once its vectors came back. The child exits when it reads ``close``, when
the parent's end of the pipe closes (the parent exited or was killed), and, as a daemon, when the
parent's interpreter exits.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from app.core.errors import ArxiuError, IndexError_
from app.core.index.embedders import (
    BUNDLED_MODEL_ID,
    Embedder,
    SentenceTransformerEmbedder,
    Vectors,
)

log = logging.getLogger(__name__)

CLOSE_TIMEOUT = 2.0
"""Seconds :meth:`EmbedWorker.close` waits for an idle child to exit before terminating it (a
busy one is terminated at once: nothing of the batch in flight was stored)."""
SERVE_THREADS = 2
"""Requests the child serves at once (an indexing batch and a search's query)."""
NICE = 0
"""Niceness added to the child by default (``ARXIU_EMBED_NICE`` overrides it)."""
NICE_ENV = "ARXIU_EMBED_NICE"


class EmbedWorker:
    """One child process holding the models of ``embedders`` (started on first use).

    Args:
        embedders: the models to run there (their unloaded objects are sent to the child).
        nice: added to the child's scheduling niceness (POSIX; 0 leaves it as the parent's;
            default: ``ARXIU_EMBED_NICE``, else :data:`NICE`).
    """

    def __init__(self, embedders: Sequence[Embedder], *, nice: int | None = None) -> None:
        self.specs = {e.model_id: e for e in embedders}
        self.nice = nice if nice is not None else int(os.environ.get(NICE_ENV) or NICE)
        self.generation = 0
        """How many children were started (a new one has no model loaded)."""
        self._process: Any = None
        self._conn: Any = None
        self._broken = False
        """The reader saw the current child's pipe close (it may not be reaped yet)."""
        self._reader: threading.Thread | None = None
        self._pending: dict[int, tuple[Any, Future[Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._closed = False

    def wrap(self) -> tuple[WorkerEmbedder, ...]:
        """An embedder per model, each embedding in this worker."""
        return tuple(WorkerEmbedder(self, spec) for spec in self.specs.values())

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        process = self._process
        return int(process.pid) if process is not None and process.is_alive() else None

    def call(self, kind: str, payload: Any) -> Any:
        """Send one request and wait for its answer (starts the child if none is running).

        Raises:
            IndexError_: ``index.worker_died`` when the child stopped before answering,
                ``index.worker_closed`` after :meth:`close`, or the coded error of the child.
        """
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise _closed_error()
            conn = self._ensure()
            request = next(self._ids)
            self._pending[request] = (conn, future)
        try:
            with self._send_lock:
                conn.send((request, kind, payload))
        except (OSError, ValueError):
            self._fail_pending(conn)
        return future.result()

    def _ensure(self) -> Any:
        """The live child's pipe, starting a child first if none runs (under the lock)."""
        if self._process is not None and self._process.is_alive() and not self._broken:
            return self._conn
        if self._process is not None:  # it died: what waited on it fails
            if self._process.is_alive():  # its pipe closed, and it is not reaped yet
                self._process.kill()
            self._process.join(CLOSE_TIMEOUT)
            self._fail_pending(self._conn, locked=True)
            self._conn.close()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(
            target=serve,
            args=(child, list(self.specs.values()), self.nice),
            name="arxiu-embed",
            daemon=True,
        )
        process.start()
        child.close()
        self._process, self._conn, self._broken = process, parent, False
        self.generation += 1
        self._reader = threading.Thread(
            target=self._read, args=(parent,), name="arxiu-embed-reader", daemon=True
        )
        self._reader.start()
        return parent

    def _read(self, conn: Any) -> None:
        """Hand every answer to the request waiting for it, until the pipe closes."""
        while True:
            try:
                request, status, payload = conn.recv()
            except (EOFError, OSError, ValueError):
                break
            with self._lock:
                _, future = self._pending.pop(request, (None, None))
            if future is None:
                continue
            if status == "ok":
                future.set_result(payload)
            else:
                future.set_exception(_coded(payload))
        self._fail_pending(conn)

    def _fail_pending(self, conn: Any, *, locked: bool = False) -> None:
        """The child behind ``conn`` is gone: fail every request that waits on it."""
        if not locked:
            with self._lock:
                self._fail_pending(conn, locked=True)
            return
        waiting = [r for r, (c, _) in self._pending.items() if c is conn]
        exitcode = None
        if self._process is not None and conn is self._conn:
            exitcode = self._process.exitcode
            self._broken = True
        for request in waiting:
            _, future = self._pending.pop(request)
            future.set_exception(_closed_error() if self._closed else _died_error(exitcode))

    def close(self) -> None:
        """Stop the child (no process is left behind); a later request raises."""
        with self._lock:
            self._closed = True
        self.restart()

    def restart(self) -> None:
        """Stop the child; the next request starts a fresh one. A batch in flight fails."""
        with self._lock:
            process, conn, reader = self._process, self._conn, self._reader
            self._process = self._conn = self._reader = None
            busy = any(c is conn for c, _ in self._pending.values())
        if conn is not None:
            try:
                with self._send_lock:
                    conn.send((0, "close", None))
            except (OSError, ValueError):
                pass
        if process is not None:
            process.join(0.1 if busy else CLOSE_TIMEOUT)  # a batch in flight is abandoned
            if process.is_alive():
                process.terminate()
                process.join(CLOSE_TIMEOUT)
            if process.is_alive():
                process.kill()
                process.join()
        if conn is not None:
            self._fail_pending(conn)
            conn.close()
        if reader is not None and reader is not threading.current_thread():
            reader.join(CLOSE_TIMEOUT)


def _died_error(exitcode: int | None) -> IndexError_:
    return IndexError_(
        "index.worker_died",
        "The embedding process stopped unexpectedly; nothing of its batch was stored, and "
        "indexing starts it again.",
        retryable=True,
        details={"exitcode": exitcode},
    )


def _closed_error() -> IndexError_:
    return IndexError_("index.worker_closed", "The embedding process was closed.")


class WorkerEmbedder:
    """An embedder whose model runs in an :class:`EmbedWorker` (same id, length, languages)."""

    languages: tuple[str, ...] | None

    def __init__(self, worker: EmbedWorker, local: Embedder) -> None:
        self.worker = worker
        self._model_id = local.model_id
        if hasattr(local, "languages"):
            self.languages = local.languages
        unknown = isinstance(local, SentenceTransformerEmbedder) and (
            local.model_id != BUNDLED_MODEL_ID
        )
        self._dim: int | None = None if unknown else local.dim
        self._loaded_in = 0

    @property
    def model_id(self) -> str:
        """The model's id (as in the process, so vectors are shared)."""
        return self._model_id

    @property
    def dim(self) -> int:
        """Vector length (asks the worker when only the loaded model knows it)."""
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory in the current child process."""
        return self._loaded_in == self.worker.generation and self.worker.pid is not None

    def load(self) -> None:
        """Load the model in the child now (starting the child if needed)."""
        self._dim = int(self.worker.call("load", self._model_id))
        self._loaded_in = self.worker.generation

    def embed(self, texts: list[str]) -> Vectors:
        """One normalised float32 row per text, computed in the child (if the child dies
        during the call it is started again and asked once more)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            rows = self.worker.call("embed", (self._model_id, list(texts)))
        except IndexError_ as error:  # died: once more in a fresh child, then give up
            if error.code != "index.worker_died":
                raise
            log.warning("the embedding process died (%s); starting it again", error.details)
            rows = self.worker.call("embed", (self._model_id, list(texts)))
        self._loaded_in = self.worker.generation
        return np.asarray(rows, dtype=np.float32)


def _coded(payload: Mapping[str, object]) -> IndexError_:
    """The child's error (``{code, message, hint?, retryable?}`` over the pipe) as raised here."""
    hint = payload.get("hint")
    return IndexError_(
        str(payload.get("code", "index.failed")),
        str(payload.get("message", "Embedding failed.")),
        hint=hint if isinstance(hint, str) else None,
        retryable=bool(payload.get("retryable", False)),
    )


# -- the child ------------------------------------------------------------------------------------
def serve(conn: Any, embedders: list[Embedder], nice: int = 0) -> None:
    """The child's main loop: answer requests until ``close`` or the parent goes away."""
    if nice and hasattr(os, "nice"):
        os.nice(nice)
    models = {e.model_id: e for e in embedders}
    send_lock = threading.Lock()
    with ThreadPoolExecutor(SERVE_THREADS, thread_name_prefix="embed") as pool:
        while True:
            try:
                request, kind, payload = conn.recv()
            except (EOFError, OSError):
                break
            if kind == "close":
                break
            pool.submit(_answer, conn, send_lock, models, (request, kind, payload))
    conn.close()


def _answer(
    conn: Any, send_lock: threading.Lock, models: dict[str, Embedder], message: tuple[Any, ...]
) -> None:
    request, kind, payload = message
    try:
        reply: tuple[str, Any] = ("ok", _handle(models, kind, payload))
    except ArxiuError as error:
        reply = ("error", {"code": error.code, "message": error.message, "hint": error.hint})
    except Exception as error:  # a failure inside a model library: coded for the parent
        log.exception("embedding failed in the worker")
        reply = ("error", {"code": "index.embed_failed", "message": f"Embedding failed: {error}"})
    try:
        with send_lock:
            conn.send((request, *reply))
    except (OSError, ValueError):  # the parent went away
        pass


def _handle(models: dict[str, Embedder], kind: str, payload: Any) -> Any:
    if kind == "load":
        embedder = models[payload]
        getattr(embedder, "load", lambda: None)()
        return embedder.dim
    if kind == "embed":
        model, texts = payload
        return np.ascontiguousarray(models[model].embed(texts), dtype=np.float32)
    raise IndexError_("index.failed", f"Unknown request {kind!r}.", category="internal")
