"""What every dialect of the local API shares: the archive, users, limits, sessions per user.

:meth:`ApiContext.session_for` gives each user an :class:`~app.core.session.AssistantSession`
restricted to what they may do: ``write_allowed`` only with the server's ``--allow-writes`` *and*
the user's ``can_write``; ``can_read_restricted`` from the user, so the egress gate treats a
reader without it like an external model. Sessions share one model cache, so a model (the local
GGUF above all) is loaded once whoever asks.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.api.hardening import LOOPBACK_NAMES
from app.api.users import User, UserStore
from app.core import paths
from app.core.chosen_language import chosen_archive_language
from app.core.session import AssistantSession, AssistantSettings

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.index.opening import ArchiveIndex
    from app.core.models.base import ChatModel
    from app.core.models.catalog import Catalog, ModelEntry
    from app.core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """The server's bounds on what one request may carry."""

    max_body_bytes: int = 1024 * 1024
    """Largest request body accepted (bigger: HTTP 413 ``request.too_large``)."""
    max_question_chars: int = 8_000
    """Longest question accepted (longer: ``request.invalid``)."""
    login_attempts: int = 5
    """Failed logins allowed per client address and user name within ``login_window_s`` (a
    user name from every client together: four times as many; see ``LoginThrottle``)."""
    login_window_s: float = 60.0
    heartbeat_s: float = 10.0
    """Seconds between ``: ping`` comments on an idle SSE stream."""
    session_ttl_s: float = 8 * 3600.0
    """How long a login cookie stays valid."""
    agent_sessions: int = 256
    """Vadalog dialect: server-side sessions held before the least recently used is evicted."""
    agent_messages_per_month: int | None = None
    """Vadalog dialect: each user's monthly message allowance (``None``: unlimited; over it:
    HTTP 402 ``AGENT_MESSAGE_LIMIT_REACHED``)."""


def base_settings() -> AssistantSettings:
    """The assistant settings from ``settings.json`` (privacy; defaults if none), in the
    language chosen for Arxiu (:func:`~app.core.chosen_language.chosen_archive_language`: the
    tools' summaries and the labels they give); the file is read once."""
    try:
        data = json.loads(paths.settings_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as error:
        log.warning("settings file unreadable, using defaults: %s", error)
        data = {}
    if not isinstance(data, dict):
        data = {}
    return AssistantSettings(
        external_content=bool(data.get("external_content", False)),
        lang=chosen_archive_language(data.get("language")),
    )


@dataclass
class ApiContext:
    """The server's shared state.

    Args:
        archive_dir: the archive served: its folder, or a shared archive's ``postgresql://``
            URL (``None``: the default demo archive).
        users: who may log in, and their permissions.
        allow_writes: the server's write opt-in (``--allow-writes``).
        limits: request bounds.
        archive: the open archive (opened from ``archive_dir`` on first use when ``None``).
        searcher: the semantic index (``None``: built on first use from the archive).
        catalog, registry, model_factory: passed to every session (``None``: the defaults).
        settings: the base assistant settings (``None``: read from ``settings.json``).
        allowed_hosts: the ``Host`` names accepted (loopback names by default).
    """

    archive_dir: Path | str | None
    users: UserStore
    allow_writes: bool = False
    limits: Limits = field(default_factory=Limits)
    archive: Archive | None = None
    searcher: Searcher | None = None
    catalog: Catalog | None = None
    registry: ToolRegistry | None = None
    model_factory: Callable[[ModelEntry], ChatModel] | None = None
    settings: AssistantSettings | None = None
    allowed_hosts: frozenset[str] = LOOPBACK_NAMES
    """The host names the server answers to (the ``Host`` header allow-list)."""
    index: ArchiveIndex | None = field(default=None, init=False)
    """The index :meth:`open_searcher` opened (``None``: none, or a searcher was given)."""
    _sessions: dict[tuple[str, bool, bool], AssistantSession] = field(
        default_factory=dict, init=False, repr=False
    )
    _models: dict[str, ChatModel] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _open_lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)
    _owned: list[Any] = field(default_factory=list, init=False, repr=False)

    # -- shared resources --------------------------------------------------------------------
    def open_archive(self) -> Archive:
        """The served archive (opened, or created as the demo, on first use)."""
        with self._open_lock:
            if self.archive is None:
                if self.archive_dir is None:
                    from app.core.archive.demo import ensure_demo_archive

                    self.archive = ensure_demo_archive(paths.default_archive_dir())
                else:
                    from app.core.archive import open_archive

                    self.archive = open_archive(self.archive_dir)
                self._owned.append(self.archive)
            return self.archive

    def open_searcher(self) -> Searcher:
        """The archive's index, opened on first use: its lexical part made current at once,
        the vectors computed in the background (a search answers from what is indexed so
        far; the server listens before any of it, see ``arxiu serve``). Its models run in a
        child process, as in the app: the server's own process never runs model code, and
        closing it abandons a batch in flight instead of waiting for it."""
        with self._open_lock:
            if self.searcher is None:
                from app.core.index.opening import open_index

                index = open_index(self.open_archive(), isolate=True)
                index.sync_lexical()
                index.start()
                self.searcher = index
                self.index = index
                self._owned.append(index)
            return self.searcher

    def model(self, entry: ModelEntry) -> ChatModel:
        """The model for ``entry``, shared by every user's session."""
        with self._lock:
            if entry.id not in self._models:
                factory = self.model_factory
                if factory is None:
                    from app.core.models.factory import create_model

                    factory = create_model
                self._models[entry.id] = factory(entry)
            return self._models[entry.id]

    # -- per user ----------------------------------------------------------------------------
    def write_allowed(self, user: User) -> bool:
        """Whether ``user`` may apply plans on this server."""
        return self.allow_writes and user.can_write

    def session_for(self, user: User) -> AssistantSession:
        """The session of ``user``: their permissions decide writes and restricted records."""
        key = (user.id, self.write_allowed(user), user.can_read_restricted)
        with self._lock:
            found = self._sessions.get(key)
        if found is not None:
            return found
        base = self.settings or base_settings()
        settings = replace(
            base,
            write_allowed=self.write_allowed(user),
            can_read_restricted=user.can_read_restricted,
        )
        session = AssistantSession(
            self.open_archive(),
            self.catalog,
            self.open_searcher(),
            settings,
            registry=self.registry,
            model_factory=self.model,
            person=user.id,  # plans are owned by the immutable id, never the name
        )
        with self._lock:
            return self._sessions.setdefault(key, session)

    async def aclose(self) -> None:
        """Stop every run, release the models, close what this context opened."""
        for session in list(self._sessions.values()):
            session.stop()
        self._sessions.clear()
        for model in list(self._models.values()):
            await model.aclose()
        self._models.clear()
        for owned in reversed(self._owned):
            owned.close()
        self._owned.clear()
