"""What the windows use from the core, built lazily so the window opens before heavy imports.

The assistant session and the index pull in llama.cpp, sentence-transformers and torch; they
are created on first use, off the GUI thread, through the factories the composition root
(:mod:`app.main`) passes in. Blocking calls run in one named worker executor.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, TypeVar

from app.core.archive import Archive, RecordKey
from app.core.errors import ArxiuError
from app.core.index.hits import Searcher
from app.ui.app_settings import AppSettings
from app.ui.gui_thread import run_released

if TYPE_CHECKING:  # typed without importing the agent stack at startup
    from app.core.index.indexer import ProgressListener
    from app.core.session import AssistantSession

log = logging.getLogger(__name__)

T = TypeVar("T")


class IndexService(Searcher, Protocol):
    """What the windows use from the index: its search (it is the session's
    :class:`~app.core.index.hits.Searcher` too) and its background indexing.

    Implemented by what :func:`app.core.index.open_index` returns (a folder's
    :class:`~app.core.index.Index`, a shared archive's index in its server); mypy checks it
    where :mod:`app.main` passes ``build_index`` as the :data:`IndexFactory`.
    """

    @property
    def paused(self) -> bool:
        """Whether background indexing is paused."""
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

    def add_progress_listener(self, listener: ProgressListener) -> None:
        """Call ``listener(progress)`` on each indexer progress event (indexer thread)."""
        ...

    def close(self) -> None:
        """Stop indexing and detach from the archive (the archive stays open)."""
        ...


SessionFactory = Callable[[Archive, Searcher | None, AppSettings, str], "AssistantSession"]
"""``(archive, searcher or None, settings, archive language) -> AssistantSession``."""
IndexFactory = Callable[[Archive, AppSettings], IndexService]
"""``(archive, settings) -> index service``."""


class Services:
    """The archive, the settings, and the lazily built session and index service.

    Args:
        archive: the open archive.
        settings: the app's settings.
        lang: the archive language code for labels (``lg-eng``, ``lg-cat``, ``lg-spa``).
        session_factory: builds the ``AssistantSession`` for an archive (may be slow).
        index_factory: builds the index service for an archive (may be slow), or ``None``.
    """

    def __init__(
        self,
        archive: Archive,
        settings: AppSettings,
        *,
        lang: str = "lg-eng",
        session_factory: SessionFactory | None = None,
        index_factory: IndexFactory | None = None,
    ) -> None:
        self.archive = archive
        self.settings = settings
        self.lang = lang
        self._session_factory = session_factory
        self._index_factory = index_factory
        self._session: AssistantSession | None = None
        self._index: IndexService | None = None
        self._lock = asyncio.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arxiu-ui-work")

    async def run_blocking(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the worker thread and await its result.

        The GUI thread's garbage is collected first: a long job (an import) allocates enough
        to trigger Python's collector on the worker thread, and a Qt object freed there (a
        dialog left in a reference cycle) makes Qt warn "Timers cannot be stopped from another
        thread" and may crash. Jobs here are few and started by a person, so the pause is not
        felt.
        """
        gc.collect()
        loop, executor = asyncio.get_running_loop(), self._executor
        return await run_released(lambda job: loop.run_in_executor(executor, job), fn)

    async def read(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (archive reads: a search, a listing) on the archive's read executor."""
        db = self.archive.db
        return await run_released(lambda job: db.aread(lambda _conn: job()), fn)

    async def record_label(self, key: RecordKey) -> str:
        """``key``'s label in the archive language, read on the archive's read executor."""
        archive, lang = self.archive, self.lang
        return await self.read(lambda: archive.record_label(key, lang))

    @property
    def session_now(self) -> AssistantSession | None:
        """The session if it was built already, else ``None`` (never builds)."""
        return self._session

    def set_session(self, session: AssistantSession) -> None:
        """Use ``session`` (tests, demos and screenshots inject a scripted one)."""
        self._session = session

    def apply_settings(self) -> None:
        """Apply the settings file to the live session, if one is built (the one place that
        does; a session built later reads them itself)."""
        if self._session is not None:
            self._session.settings = self.settings.assistant_settings(
                self.lang, self._session.settings
            )

    async def session(self) -> AssistantSession:
        """The assistant session, built on first use off the GUI thread; its tools label in
        the UI's language.

        Raises:
            ArxiuError: ``ai.session_unavailable`` when there is no session and nothing to
                build one with.
        """
        async with self._lock:
            if self._session is None and self._session_factory is not None:
                factory = self._session_factory
                index = await self.index()
                self._session = await self.run_blocking(
                    lambda: factory(self.archive, index, self.settings, self.lang)
                )
            if self._session is None:
                raise ArxiuError(
                    "ai.session_unavailable",
                    "The assistant is not available in this window.",
                    hint="Restart Arxiu; if it persists, report it with arxiu.log.",
                    category="internal",
                )
            return self._session

    @property
    def index_now(self) -> IndexService | None:
        """The index service if it was built already, else ``None``."""
        return self._index

    async def index(self) -> IndexService | None:
        """The index service, built on first use off the GUI thread (``None`` if unavailable)."""
        if self._index is None and self._index_factory is not None:
            factory = self._index_factory
            self._index = await self.run_blocking(lambda: factory(self.archive, self.settings))
        return self._index

    async def aclose(self) -> None:
        """Close the session and the index service (a failure is logged: the rest still
        closes)."""
        session, self._session = self._session, None
        index, self._index = self._index, None
        if session is not None:
            try:
                await session.aclose()
            except Exception:
                log.exception("closing the session failed")
        if index is not None:
            try:
                index.close()
            except Exception:
                log.exception("closing the index failed")
        self._executor.shutdown(wait=True, cancel_futures=True)
