"""What the windows use from the core, built lazily so the window opens before heavy imports.

The assistant session and the index pull in llama.cpp, sentence-transformers and torch; they
are created on first use, off the GUI thread, through the factories the composition root
(:mod:`app.main`) passes in. Blocking calls run in one named worker executor.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from app.core.archive import Archive
from app.ui.app_settings import AppSettings

log = logging.getLogger(__name__)

T = TypeVar("T")
SessionFactory = Callable[[Archive, Any, AppSettings], Any]
"""``(archive, searcher or None, settings) -> AssistantSession``."""
IndexFactory = Callable[[Archive, AppSettings], Any]
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
        self._session: Any = None
        self._index: Any = None
        self._lock = asyncio.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arxiu-ui-work")

    async def run_blocking(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the worker thread and await its result."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    @property
    def has_session(self) -> bool:
        """Whether the assistant can be built at all."""
        return self._session is not None or self._session_factory is not None

    @property
    def session_now(self) -> Any:
        """The session if it was built already, else ``None`` (never builds)."""
        return self._session

    def set_session(self, session: Any) -> None:
        """Use ``session`` (tests, demos and screenshots inject a scripted one)."""
        self._session = session

    async def session(self) -> Any:
        """The assistant session, built on first use off the GUI thread."""
        async with self._lock:
            if self._session is None and self._session_factory is not None:
                factory = self._session_factory
                index = await self.index()
                searcher = getattr(index, "searcher", index)
                self._session = await self.run_blocking(
                    lambda: factory(self.archive, searcher, self.settings)
                )
            return self._session

    @property
    def index_now(self) -> Any:
        """The index service if it was built already, else ``None``."""
        return self._index

    async def index(self) -> Any:
        """The index service, built on first use off the GUI thread (``None`` if unavailable)."""
        if self._index is None and self._index_factory is not None:
            factory = self._index_factory
            self._index = await self.run_blocking(lambda: factory(self.archive, self.settings))
        return self._index

    async def aclose(self) -> None:
        """Close the session and the index service."""
        for name in ("_session", "_index"):
            service = getattr(self, name)
            setattr(self, name, None)
            closer = getattr(service, "aclose", None)
            if closer is not None:
                try:
                    await closer()
                except Exception:
                    log.exception("closing %s failed", name)
            elif hasattr(service, "close"):
                service.close()
        self._executor.shutdown(wait=True, cancel_futures=True)
