"""The controls of an index's background run, the same for a folder's index and a shared
archive's: pause, resume, cancel, progress, each handed to the index's :class:`Indexer`."""

from __future__ import annotations

from app.core.index.indexer import Indexer, Progress, ProgressListener


class IndexRunControl:
    """Mixed into :class:`~app.core.index.service.Index` and
    :class:`~app.core.index.postgres.service.SharedIndex`, which set ``indexer``."""

    indexer: Indexer

    def pause(self) -> None:
        """Pause background indexing after the batch in flight."""
        self.indexer.pause()

    def resume(self) -> None:
        """Resume paused indexing."""
        self.indexer.resume()

    @property
    def paused(self) -> bool:
        """Whether background indexing is paused."""
        return self.indexer.paused

    def cancel(self) -> None:
        """Stop the current indexing run (what is committed stays)."""
        self.indexer.cancel()

    def progress(self) -> Progress:
        """The indexer's latest progress."""
        return self.indexer.progress()

    def add_progress_listener(self, listener: ProgressListener) -> None:
        """Call ``listener(progress)`` on each indexer progress event (indexer thread)."""
        self.indexer.add_listener(listener)
