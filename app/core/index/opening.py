"""The index of an open archive, whichever engine holds it: :func:`open_index`.

::

    index = open_index(archive)                     # its models: the archive's setting
    index = open_index(archive, HashingEmbedder())  # tests
    index.sync_lexical()
    hits = index.search("quan ens van fer marxar", k=5)
    index.close()

A folder archive gets :class:`~app.core.index.service.Index` (SQLite: FTS5 and in-memory
matrices); a shared archive gets :class:`~app.core.index.postgres.service.SharedIndex` (the
search and the indexing run in the PostgreSQL server, shared with other workstations and
``arxiu index --worker``). Both are an :class:`ArchiveIndex`, what the commands, the local API
and the desktop app use.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from app.core.archive.store import Archive
from app.core.index.embedders import Embedder
from app.core.index.foreground import Foreground
from app.core.index.hits import Searcher, SearchFilter, SearchHit, SearchMode
from app.core.index.indexer import Indexer, Progress, ProgressListener
from app.core.index.service import Index, IndexStats


class ArchiveIndex(Protocol):
    """Search and indexing for one open archive, on either engine (see the module).

    It is a :class:`~app.core.index.hits.Searcher` and a
    :class:`~app.core.index.foreground.HoldsForeground`; ``indexer`` is its background
    indexer (``indexer.wait_idle_async``, ``indexer.last_run``…).
    """

    @property
    def archive(self) -> Archive:
        """The archive indexed."""
        ...

    @property
    def embedders(self) -> Sequence[Embedder]:
        """The index's models (the first is the one :meth:`stats` reports)."""
        ...

    @property
    def indexer(self) -> Indexer:
        """The background indexer."""
        ...

    @property
    def foreground(self) -> Foreground:
        """The "a person is waiting" signal background indexing yields to."""
        ...

    @property
    def engine(self) -> Searcher:
        """The search engine the index delegates to."""
        ...

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filter: SearchFilter | None = None,
        group_by_record: bool = False,
        lang: str | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` (see :class:`~app.core.index.hits.Searcher`)."""
        ...

    def person_waiting(self) -> AbstractContextManager[None]:
        """Hold "a person is waiting" for a ``with`` block: background indexing yields."""
        ...

    def start(self) -> None:
        """Index in the background now and after every record change."""
        ...

    def pause(self) -> None:
        """Pause background indexing after the batch in flight."""
        ...

    def resume(self) -> None:
        """Resume paused indexing."""
        ...

    @property
    def paused(self) -> bool:
        """Whether background indexing is paused."""
        ...

    def cancel(self) -> None:
        """Stop the current indexing run (what is done stays done)."""
        ...

    def progress(self) -> Progress:
        """The indexer's latest progress."""
        ...

    def add_progress_listener(self, listener: ProgressListener) -> None:
        """Call ``listener(progress)`` on each indexer progress event (indexer thread)."""
        ...

    def index_now(self) -> Progress:
        """Index everything pending on the calling thread (CLI, scripts, tests)."""
        ...

    def pending(self) -> int:
        """Work items left: records to chunk plus texts to embed, for every model."""
        ...

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until background indexing has nothing left to do; ``False`` on timeout."""
        ...

    def rebuild(self) -> None:
        """Forget every chunk: every record is chunked again (vectors of unchanged texts are
        reused)."""
        ...

    def stats(self) -> IndexStats:
        """Counts for status displays: chunks, vectors, work pending, completeness per model."""
        ...

    def sync_lexical(self) -> int:
        """Chunk every changed record now, without embedding; how many were handled."""
        ...

    def close(self) -> None:
        """Stop indexing and detach from the archive (the archive stays open)."""
        ...


def open_index(
    archive: Archive,
    embedder: Embedder | Sequence[Embedder] | None = None,
    *,
    isolate: bool = False,
    compressed: bool | None = None,
) -> ArchiveIndex:
    """The index of ``archive``: :class:`~app.core.index.service.Index` for a folder,
    :class:`~app.core.index.postgres.service.SharedIndex` for a shared archive.

    Args:
        archive: the open archive.
        embedder: the model or models (default: the archive's ``index.model`` setting, else
            the default pair).
        isolate: run the models in a child process (the desktop app, the local API).
        compressed: keep the in-memory vectors compressed (a folder archive's; a shared
            archive keeps none).

    Raises:
        ArchiveError: ``archive.pg_driver_missing`` and the connection errors of a shared
            archive's server.
    """
    if archive.shared:
        from app.core.index.postgres.service import SharedIndex

        return SharedIndex(archive, embedder, isolate=isolate)
    return Index(archive, embedder, compressed=compressed, isolate=isolate)
