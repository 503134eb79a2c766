"""Embedding in a child process, so that the desktop app's own process never runs model code.

Importing torch, loading a model and some C calls inside an encode hold the GIL for long
stretches; in the app's process they stalled the GUI thread (247 ms measured while indexing
with both models loaded). :class:`EmbedWorker` runs the models in one child process started
with the ``spawn`` method (each model loaded once there, on first use); :meth:`EmbedWorker.wrap`
gives, for each embedder, a :class:`WorkerEmbedder` with the same ``model_id``, ``dim`` and
``languages`` whose :meth:`~WorkerEmbedder.embed` sends the texts through a pipe and waits for
the float32 rows (the waiting thread releases the GIL).

Protocol (``multiprocessing`` pipe). Parent → child: ``(id, "load", model_id)``,
``(id, "embed", (model_id, texts))`` (a query's vector), ``(id, "batch", (model_id, texts))``
(an indexing batch), ``(id, "waiting", bool)`` (a person waits, or no longer does) or
``(0, "close", None)``. Child → parent, for each request: ``(id, "ok", payload)`` (the vector
length for a load, the rows for an embed or a batch, ``None`` for ``waiting``) or
``(id, "error", {code, message, hint})`` (a message or hint as a sentence or a
:class:`~app.core.phrases.Phrase`, so that it is still said in a person's language).

Queries and batches have lanes of their own in the child: loads and query vectors are served on
a small pool that an indexing batch never occupies, and batches on one thread of their own, so
a search's query is never queued behind a batch. A batch is encoded in length-sorted slices of
:data:`BATCH_SLICE` texts; while a person waits (:mod:`~app.core.index.foreground`, sent as
``waiting``) the batch lane starts no new slice, so the query and the local model's prompt get
the cores within one slice's time instead of a whole batch's.

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
    default_embedders,
)
from app.core.index.indexer import as_embedders
from app.core.phrases import Phrase

log = logging.getLogger(__name__)

CLOSE_TIMEOUT = 2.0
"""Seconds :meth:`EmbedWorker.close` waits for an idle child to exit before terminating it (a
busy one is terminated at once: nothing of the batch in flight was stored)."""
SERVE_THREADS = 2
"""Loads and query vectors the child serves at once (indexing batches have their own thread)."""
BATCH_SLICE = 64
"""Texts of an indexing batch encoded per model call in the child; the batch lane checks for a
waiting person between two slices. 64 is USE's own batch (``USE_BATCH``) and four of ONNX
Runtime's (``ORT_BATCH``), and the texts are sorted by length first, so slicing adds no calls
or padding to either: a slice takes about 1.2 s of MiniLM and 0.2 s of USE on these 2 cores."""
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
        self._waiting = False
        """Whether a person waits (sent to every child started, see :meth:`set_waiting`)."""

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

    def set_waiting(self, waiting: bool) -> None:
        """Tell the child that a person waits (its batch lane starts no new slice) or no
        longer does; returns once a running child has taken it in (a child started later is
        told at its start). A :class:`~app.core.index.foreground.Foreground` listener."""
        with self._lock:
            self._waiting = waiting
            alive = self._process is not None and self._process.is_alive() and not self._broken
        if not alive:
            return
        try:
            self.call("waiting", waiting)
        except IndexError_ as error:  # the child went away: the next one is told at its start
            log.info("the embedding process was not told a person waits: %s", error)

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
            args=(child, list(self.specs.values()), self.nice, self._waiting),
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
        """One normalised float32 row per text, computed in the child's query lane (never
        behind an indexing batch); if the child dies during the call it is started again and
        asked once more."""
        return self._embed("embed", texts)

    def embed_background(self, texts: list[str]) -> Vectors:
        """:meth:`embed` as an indexing batch: in the child's batch lane, in slices, pausing
        between two while a person waits."""
        return self._embed("batch", texts)

    def _embed(self, kind: str, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            rows = self.worker.call(kind, (self._model_id, list(texts)))
        except IndexError_ as error:  # died: once more in a fresh child, then give up
            if error.code != "index.worker_died":
                raise
            log.warning("the embedding process died (%s); starting it again", error.details)
            rows = self.worker.call(kind, (self._model_id, list(texts)))
        self._loaded_in = self.worker.generation
        return np.asarray(rows, dtype=np.float32)


def _coded(payload: Mapping[str, object]) -> IndexError_:
    """The child's error (``{code, message, hint?, retryable?}`` over the pipe, its message and
    hint a sentence or a :class:`~app.core.phrases.Phrase`) as raised here."""
    message = payload.get("message", "Embedding failed.")
    hint = payload.get("hint")
    return IndexError_(
        str(payload.get("code", "index.failed")),
        message if isinstance(message, Phrase) else str(message),
        hint=hint if isinstance(hint, str | Phrase) else None,
        retryable=bool(payload.get("retryable", False)),
    )


# -- the child ------------------------------------------------------------------------------------
class _Lanes:
    """The child's state shared by its threads: the batch lane's gate and the shutdown flag."""

    def __init__(self, waiting: bool) -> None:
        self.clear = threading.Event()
        """Set while nobody waits: the batch lane starts a slice only then."""
        self.closing = threading.Event()
        if not waiting:
            self.clear.set()

    def set_waiting(self, waiting: bool) -> None:
        if waiting:
            self.clear.clear()
        else:
            self.clear.set()

    def close(self) -> None:
        self.closing.set()
        self.clear.set()  # a batch lane waiting for a person stops at once


def serve(conn: Any, embedders: list[Embedder], nice: int = 0, waiting: bool = False) -> None:
    """The child's main loop: answer requests until ``close`` or the parent goes away."""
    if nice and hasattr(os, "nice"):
        os.nice(nice)
    models = {e.model_id: e for e in embedders}
    send_lock = threading.Lock()
    lanes = _Lanes(waiting)
    queries = ThreadPoolExecutor(SERVE_THREADS, thread_name_prefix="embed-query")
    batches = ThreadPoolExecutor(1, thread_name_prefix="embed-batch")
    try:
        while True:
            try:
                request, kind, payload = conn.recv()
            except (EOFError, OSError):
                break
            if kind == "close":
                break
            if kind == "waiting":  # at once, on this thread: never queued behind anything
                lanes.set_waiting(bool(payload))
                _send(conn, send_lock, request, ("ok", None))
                continue
            pool = batches if kind == "batch" else queries
            pool.submit(_answer, conn, send_lock, models, lanes, (request, kind, payload))
    finally:
        lanes.close()
        queries.shutdown(wait=True, cancel_futures=True)
        batches.shutdown(wait=True, cancel_futures=True)
        conn.close()


def _answer(
    conn: Any,
    send_lock: threading.Lock,
    models: dict[str, Embedder],
    lanes: _Lanes,
    message: tuple[Any, ...],
) -> None:
    request, kind, payload = message
    try:
        reply: tuple[str, Any] = ("ok", _handle(models, lanes, kind, payload))
    except ArxiuError as error:
        reply = (
            "error",
            {"code": error.code, "message": error.message_words, "hint": error.hint_words},
        )
    except Exception as error:  # a failure inside a model library: coded for the parent
        log.exception("embedding failed in the worker")
        failed = Phrase.of("Embedding failed: {why}", why=str(error))
        reply = ("error", {"code": "index.embed_failed", "message": failed})
    _send(conn, send_lock, request, reply)


def _send(conn: Any, send_lock: threading.Lock, request: int, reply: tuple[str, Any]) -> None:
    try:
        with send_lock:
            conn.send((request, *reply))
    except (OSError, ValueError):  # the parent went away
        pass


def _handle(models: dict[str, Embedder], lanes: _Lanes, kind: str, payload: Any) -> Any:
    if kind == "load":
        embedder = models[payload]
        getattr(embedder, "load", lambda: None)()
        return embedder.dim
    if kind == "embed":
        model, texts = payload
        return np.ascontiguousarray(models[model].embed(texts), dtype=np.float32)
    if kind == "batch":
        model, texts = payload
        return _embed_yielding(models[model], texts, lanes)
    raise IndexError_(
        "index.failed", Phrase.of("Unknown request {kind!r}.", kind=kind), category="internal"
    )


def _embed_yielding(embedder: Embedder, texts: list[str], lanes: _Lanes) -> Vectors:
    """``texts`` embedded in length-sorted slices of :data:`BATCH_SLICE`, each started only
    while nobody waits (the rows come back in the order of ``texts``)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    rows: Vectors | None = None
    for start in range(0, len(order), BATCH_SLICE):
        lanes.clear.wait()  # a person waits: no new slice until they are answered
        if lanes.closing.is_set():
            raise IndexError_("index.worker_closed", "The embedding process was closed.")
        part = order[start : start + BATCH_SLICE]
        vectors = np.asarray(embedder.embed([texts[i] for i in part]), dtype=np.float32)
        if rows is None:
            rows = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        rows[part] = vectors
    if rows is None:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.ascontiguousarray(rows)


def index_models(
    embedder: Embedder | Sequence[Embedder] | None, setting: str | None, *, isolate: bool
) -> tuple[tuple[Embedder, ...], EmbedWorker | None]:
    """The models an index embeds with (a folder's or a shared archive's): ``embedder`` (one
    or several), else those of the archive's ``index.model`` ``setting``, else the default
    pair; with ``isolate`` each runs in a child process, whose worker is returned to close."""
    chosen = as_embedders(embedder) if embedder is not None else default_embedders(setting)
    if not isolate:
        return chosen, None
    worker = EmbedWorker(chosen)
    return worker.wrap(), worker
