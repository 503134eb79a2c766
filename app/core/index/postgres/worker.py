"""``arxiu index --worker``: chunk a PostgreSQL archive's changed records and embed its chunks
from a queue that several workers drain at once, on any machine, resumably.

Each round of a worker first chunks the records created, changed or deleted since they were
last chunked (:mod:`app.core.index.postgres.chunker`: the same claim by row locks, each record
once), then embeds what waits; so a worker left running with ``follow`` keeps a shared
archive's whole index current.

The queue is the index itself: a chunk is waiting while its text (``content_hash``) has no
vector in ``index_vectors`` for one of the worker's models. There is no queue table and no
lease column, so nothing can fall out of step with the index, and a worker needs no right
beyond a writer's (``D_writer``).

Why ``SELECT … FOR UPDATE SKIP LOCKED`` inside a transaction rather than a claim table with a
lease: the claim *is* the transaction. A worker takes a batch by locking its chunks' rows,
embeds their texts, writes the vectors and commits, and the commit releases the locks. A
worker killed at any point (``SIGKILL``, a crash, a lost connection) has its transaction
rolled back by the server and its locks released with its session: its batch is simply
waiting again, and the next worker (or a restart) takes it. A lease would need a clock, an
expiry to tune against the slowest model, and a sweep of stale claims; a lock held by a live
session is never stale. The one case in which a session outlives its worker (a machine that
vanishes without closing its TCP connection) is bounded by :data:`LEASE_S`, the session's
``idle_in_transaction_session_timeout``.

Exactly once: equal texts share one vector (``index_vectors``' key is ``(content_hash,
model)``, as on SQLite), so each text is claimed through one chunk only, the lowest ``id`` of
the chunks holding it, and two workers can never take the same text at the same time. A
worker whose claim query began before another worker committed may still lock a chunk that
has just been finished (PostgreSQL does not re-check a condition on *other* rows); so once its
locks are held the worker reads again, in a new statement and so a new snapshot, which of its
texts still lack a vector, and embeds only those. ``INSERT … ON CONFLICT DO NOTHING`` keeps a
vector written by a role that sees other rows (below) from failing the batch.

Each worker walks the chunks in ``id`` order from where its last batch ended (no batch
re-reads the finished part of the table), and when it reaches the end it goes round once more
from the start for the chunks that were locked by others when it passed. It stops when a round
from the start finds nothing it can take (with ``follow``, it polls instead). Chunks locked by
a live worker are that worker's: they are not waited for.

Row-level security applies: a worker whose role lacks the restricted right neither sees nor
embeds the restricted chunks; run one worker as a role that has it (or as the owner) to embed
them. Two such workers may both embed a text that a restricted and an open chunk share; the
vector is still written once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import psycopg

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn, connect, translate
from app.core.archive.store import Archive, open_archive
from app.core.errors import IndexError_
from app.core.index.chunking import Chunk
from app.core.index.embedders import Embedder
from app.core.index.indexer import embed_batch
from app.core.index.postgres import chunker
from app.core.index.postgres.values import as_int, as_str
from app.core.phrases import Phrase

BATCH = 64
"""Chunks claimed per transaction: two MiniLM forward passes, a few seconds of USE on a busy
workstation; a killed worker loses at most this much work."""
LEASE_S = 900
"""The server ends a worker's session (so rolls its batch back and frees its locks) when it
holds a claim this long without a statement: a machine that vanished, not a slow model."""
POLL_S = 5.0
"""With ``follow``, seconds between looks at an empty queue."""

_CLAIM = (
    "SELECT c.id, c.content_hash, c.label, c.text FROM index_chunks c "
    "WHERE c.id > %(after)s "
    "AND EXISTS (SELECT 1 FROM unnest(%(models)s::text[]) AS m(model) WHERE NOT EXISTS "
    "(SELECT 1 FROM index_vectors v WHERE v.content_hash = c.content_hash "
    "AND v.model = m.model)) "
    "AND NOT EXISTS (SELECT 1 FROM index_chunks d "
    "WHERE d.content_hash = c.content_hash AND d.id < c.id) "
    "ORDER BY c.id LIMIT %(limit)s FOR UPDATE OF c SKIP LOCKED"
)
"""A batch of chunks whose text lacks a vector for one of the models, each text through its
lowest chunk id, rows locked by another worker skipped (they are that worker's)."""
_DONE = (
    "SELECT content_hash, model FROM index_vectors WHERE content_hash = ANY(%s) AND model = ANY(%s)"
)
_WRITE = (
    "INSERT INTO index_vectors(content_hash, model, dim, vector) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (content_hash, model) DO NOTHING"
)


@dataclass(frozen=True)
class ModelCount:
    """What one worker run embedded with one model."""

    model: str
    vectors: int
    """Vectors written (each a distinct text, whatever number of chunks holds it)."""


@dataclass(frozen=True)
class WorkerResult:
    """What one worker run did: its vectors per model, its batches, its time."""

    counts: tuple[ModelCount, ...]
    batches: int
    """Transactions committed that claimed at least one chunk."""
    chunks: int
    """Chunks claimed (one per distinct text)."""
    seconds: float
    records: int = 0
    """Records (re)chunked, and indexed records gone whose chunks were dropped."""

    @property
    def vectors(self) -> int:
        """Vectors written, all models together."""
        return sum(c.vectors for c in self.counts)

    @property
    def rate(self) -> float:
        """Vectors written a second (0 for a run that took no time)."""
        return self.vectors / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Tally:
    """A run's figures so far (vectors per model, batches, chunks claimed, records chunked)."""

    vectors: dict[str, int]
    batches: int = 0
    chunks: int = 0
    records: int = 0
    started: float = field(default_factory=time.monotonic)

    def result(self) -> WorkerResult:
        """The figures as a :class:`WorkerResult`."""
        counts = tuple(ModelCount(m, n) for m, n in self.vectors.items())
        seconds = time.monotonic() - self.started
        return WorkerResult(counts, self.batches, self.chunks, seconds, self.records)


@dataclass(frozen=True)
class _Claimed:
    id: int
    content_hash: str
    embed_text: str


def run_worker(
    url: str,
    embedders: Sequence[Embedder],
    *,
    batch: int = BATCH,
    follow: bool = False,
    poll_s: float = POLL_S,
    stop: threading.Event | None = None,
    progress: Callable[[WorkerResult], None] | None = None,
    chunk: bool = True,
) -> WorkerResult:
    """Chunk the archive's changed records, then embed its waiting chunks with ``embedders``,
    until none is left to take (with ``follow``, until ``stop`` is set), one committed batch
    at a time; each round from the start chunks again what changed meanwhile.

    Args:
        url: the archive's ``postgresql://`` URL; its role needs the write right.
        embedders: the models to embed with (distinct ``model_id``\\ s).
        batch: chunks claimed per transaction.
        follow: keep polling an empty queue every ``poll_s`` seconds.
        stop: ends the run after the batch in hand (and a ``follow`` wait) when set.
        progress: called after each committed batch with the run's figures so far.
        chunk: chunk the changed records first (``False``: embed only).

    Raises:
        ArchiveError: a bad URL, an unreachable server, a refused login, a database without
            pgvector or the Arxiu schema, a role without the write right
            (``archive.pg_permission``), the connection lost during the run.
        IndexError_: ``index.worker_bad_batch``, ``index.worker_no_models``; an embedder's
            own errors (a model that cannot load).
    """
    models = _models(embedders, batch)
    tally = Tally({e.model_id: 0 for e in embedders})
    conn = connect(url)
    opened = _LazyArchive(url)
    try:
        prepare(conn, url)
        after = 0
        while stop is None or not stop.is_set():
            if after == 0 and chunk:
                _chunk_round(conn, url, opened, tally, progress)
            claimed = take_batch(conn, url, embedders, models, after, batch, tally)
            if claimed is not None:
                after = claimed
                if progress is not None:
                    progress(tally.result())
            elif after > 0:
                after = 0  # one more round from the start: chunks others held when we passed
            elif not follow:
                break
            elif stop is not None:
                stop.wait(poll_s)
            else:
                time.sleep(poll_s)
    finally:
        conn.close()
        opened.close()
    return tally.result()


class _LazyArchive:
    """The archive at ``url``, opened on first use (a worker needs its sections' fields only
    when a record is to be cut)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.archive: Archive | None = None

    def __call__(self) -> Archive:
        if self.archive is None:
            self.archive = open_archive(self.url)
        return self.archive

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()
            self.archive = None


def _chunk_round(
    conn: Conn,
    url: str,
    archive: Callable[[], Archive],
    tally: Tally,
    progress: Callable[[WorkerResult], None] | None,
) -> None:
    """Chunk every record changed since it was last chunked, a committed batch at a time."""
    try:
        walk = chunker.ChunkWalk(
            chunker.archive_shapes(archive),
            size=chunker.BATCH,
            sees_all=chunker.sees_everything(conn),
        )
        while (count := walk.step(conn)).handled:
            tally.records += count.handled
            if progress is not None:
                progress(tally.result())
    except psycopg.Error as exc:
        raise translate(exc, url) from exc


def _models(embedders: Sequence[Embedder], batch: int) -> list[str]:
    if batch < 1:
        raise IndexError_(
            "index.worker_bad_batch",
            Phrase.of("A worker's batch must hold at least one chunk, not {batch}.", batch=batch),
            category="input",
        )
    models = [e.model_id for e in embedders]
    if not models or len(set(models)) != len(models):
        raise IndexError_(
            "index.worker_no_models",
            "A worker needs one or more embedding models, each once.",
            hint="Name the archive's models with --model, or set its index.model setting.",
            category="input",
        )
    return models


def prepare(conn: Conn, url: str) -> None:
    """Set a worker's session up: its claim timeout, and a check that the archive has its
    index tables (``index.worker_no_archive``)."""
    try:
        with conn.transaction():
            conn.execute(
                "SELECT set_config('idle_in_transaction_session_timeout', %s, false)",
                (f"{LEASE_S}s",),
            )
            row = conn.execute(
                "SELECT to_regclass('public.index_chunks') IS NOT NULL "
                "AND to_regclass('public.index_vectors') IS NOT NULL"
            ).fetchone()
    except psycopg.Error as exc:
        raise translate(exc, url) from exc
    if not row or not row[0]:
        raise IndexError_(
            "index.worker_no_archive",
            Phrase.of(
                "The database {where} holds no Arxiu archive (no index tables).",
                where=conn.info.dbname,
            ),
            hint="Copy an archive into it first: arxiu archive copy FOLDER URL.",
            category="input",
        )


def take_batch(
    conn: Conn,
    url: str,
    embedders: Sequence[Embedder],
    models: list[str],
    after: int,
    size: int,
    tally: Tally,
    before_embed: Callable[[Embedder], None] | None = None,
) -> int | None:
    """Claim, embed, write and commit one batch of the chunks after id ``after``; the last
    chunk id claimed (``None``: nothing to take after ``after``). The vectors written are
    counted in ``tally``; ``before_embed(embedder)`` is called before each model embeds
    (the index loads it there, saying so in its progress)."""
    try:
        with conn.transaction():
            claimed = _claim(conn, models, after, size)
            if not claimed:
                return None
            wanted = _still_missing(conn, claimed, models)
            for embedder in embedders:
                texts = wanted[embedder.model_id]
                if texts:
                    if before_embed is not None:
                        before_embed(embedder)
                    tally.vectors[embedder.model_id] += _embed(conn, embedder, texts)
    except psycopg.Error as exc:
        raise translate(exc, url) from exc
    tally.batches += 1
    tally.chunks += len(claimed)
    return claimed[-1].id


def _claim(conn: Conn, models: list[str], after: int, size: int) -> list[_Claimed]:
    rows = conn.execute(_CLAIM, {"after": after, "models": models, "limit": size}).fetchall()
    return [
        _Claimed(as_int(r[0]), as_str(r[1]), _embed_text(as_str(r[2]), as_str(r[3]))) for r in rows
    ]


def _embed_text(label: str, text: str) -> str:
    """What the SQLite indexer embeds for a chunk (its label, then its text)."""
    return Chunk(RecordKey("", 0), "", "", 0, text, label).embed_text


def _still_missing(
    conn: Conn, claimed: list[_Claimed], models: list[str]
) -> dict[str, list[_Claimed]]:
    """Per model, the claimed texts without a vector, read in a new snapshot now that their
    rows are locked (a worker that finished them before has committed by now)."""
    rows = conn.execute(_DONE, ([c.content_hash for c in claimed], models)).fetchall()
    done = {(as_str(r[0]), as_str(r[1])) for r in rows}
    return {m: [c for c in claimed if (c.content_hash, m) not in done] for m in models}


def _embed(conn: Conn, embedder: Embedder, claimed: list[_Claimed]) -> int:
    """Embed ``claimed``'s texts with ``embedder`` and write the vectors; how many were new."""
    vectors = embed_batch(embedder, [c.embed_text for c in claimed])
    model = embedder.model_id
    with conn.cursor() as cur:
        cur.executemany(
            _WRITE,
            [
                (c.content_hash, model, int(v.shape[0]), v)
                for c, v in zip(claimed, vectors, strict=True)
            ],
        )
        return max(cur.rowcount, 0)
