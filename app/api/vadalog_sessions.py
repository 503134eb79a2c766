"""Server-side agent sessions of the Vadalog dialect, and the monthly message allowance.

A session is keyed by the user's immutable id and ``session_id`` (a removed and re-added name
starts with no sessions) and holds the conversation's text-only
history, its title, the model it was switched to, the change plan waiting for authorization and
the tools the client has authorized for the rest of the session. Sessions live in memory; past
the configured capacity the least recently used one is evicted (its next message starts a new
conversation), as the seed says.

:class:`MessageQuota` counts each user's messages per calendar month (UTC); over the limit a
chat is answered with HTTP 402 ``AGENT_MESSAGE_LIMIT_REACHED``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.core.agent.history_entry import HistoryEntry
from app.core.agent.plan_types import PendingPlan

DEFAULT_SESSION_ID = "default"
DEFAULT_CAPACITY = 256
LIMIT_CODE = "AGENT_MESSAGE_LIMIT_REACHED"


@dataclass
class AgentSession:
    """One conversation of one user."""

    user: str
    session_id: str
    history: list[HistoryEntry] = field(default_factory=list)
    title: str = ""
    model: str | None = None
    pending: PendingPlan | None = None
    """The change plan awaiting the client's authorization."""
    authorized_tools: set[str] = field(default_factory=set)
    busy: bool = False


class SessionStore:
    """The sessions of every user, least recently used evicted past ``capacity``."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = max(1, capacity)
        self._sessions: OrderedDict[tuple[str, str], AgentSession] = OrderedDict()
        self._lock = threading.Lock()
        self.evicted: list[tuple[str, str]] = []
        """The keys evicted so far, oldest first (for the log and for tests)."""

    def get(self, user: str, session_id: str) -> AgentSession | None:
        """The session, if it is held (and mark it as recently used)."""
        with self._lock:
            found = self._sessions.get((user, session_id))
            if found is not None:
                self._sessions.move_to_end((user, session_id))
            return found

    def open(self, user: str, session_id: str) -> AgentSession:
        """The session, created when it is not held (evicting the least recently used)."""
        key = (user, session_id)
        with self._lock:
            found = self._sessions.get(key)
            if found is not None:
                self._sessions.move_to_end(key)
                return found
            created = AgentSession(user, session_id)
            self._sessions[key] = created
            while len(self._sessions) > self.capacity:
                oldest = next(k for k, s in self._sessions.items() if not s.busy or k == key)
                if oldest == key:
                    break
                del self._sessions[oldest]
                self.evicted.append(oldest)
            return created

    def reset(self, user: str, session_id: str) -> bool:
        """Forget a session's conversation; whether there was one."""
        with self._lock:
            return self._sessions.pop((user, session_id), None) is not None

    def __len__(self) -> int:
        return len(self._sessions)


def next_month(moment: datetime) -> datetime:
    """The first instant of the calendar month after ``moment`` (UTC)."""
    if moment.month == 12:
        return datetime(moment.year + 1, 1, 1, tzinfo=UTC)
    return datetime(moment.year, moment.month + 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class LimitReached:
    """The 402 answer's body: ``{code, used, limit, resets_at}``."""

    used: int
    limit: int
    resets_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """The seed's JSON body."""
        stamp = self.resets_at.isoformat().replace("+00:00", "Z")
        return {"code": LIMIT_CODE, "used": self.used, "limit": self.limit, "resets_at": stamp}


class MessageQuota:
    """Messages per user per calendar month (``limit`` ``None``: unlimited)."""

    def __init__(
        self, limit: int | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.limit = limit
        self.clock = clock or (lambda: datetime.now(UTC))
        self._used: dict[tuple[str, int, int], int] = {}
        self._lock = threading.Lock()

    def _key(self, user: str) -> tuple[tuple[str, int, int], datetime]:
        moment = self.clock()
        return (user, moment.year, moment.month), moment

    def take(self, user: str) -> LimitReached | None:
        """Count one message for ``user``; the refusal instead when the month's are used."""
        key, moment = self._key(user)
        with self._lock:
            used = self._used.get(key, 0)
            if self.limit is not None and used >= self.limit:
                return LimitReached(used, self.limit, next_month(moment))
            self._used[key] = used + 1
        return None

    def give_back(self, user: str) -> None:
        """Uncount a message that was refused before it ran."""
        key, _ = self._key(user)
        with self._lock:
            if self._used.get(key, 0) > 0:
                self._used[key] -= 1

    def used(self, user: str) -> int:
        """Messages ``user`` sent this month."""
        key, _ = self._key(user)
        return self._used.get(key, 0)
