"""Login sessions of the Dédalo dialect: an HttpOnly cookie plus a CSRF token per login.

A login creates a random session id (the cookie) and a random CSRF token (returned in the
login answer, sent back by the client in ``X-Dedalo-Csrf-Token``). Both are kept in memory
only: a restart logs everyone out. Sessions expire after the configured lifetime and the table
is bounded (the oldest login goes first).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

COOKIE_NAME = "arxiu_session"
CSRF_HEADER = "x-dedalo-csrf-token"
MAX_SESSIONS = 10_000


@dataclass(frozen=True)
class Login:
    """One logged-in client."""

    user_name: str
    csrf_token: str
    expires: float
    user_id: str = ""
    """The immutable id of the user who logged in: a removed and re-added name is another
    user, whose look-up no longer matches this login."""


class LoginTable:
    """Session id → :class:`Login`, thread-safe, bounded, expiring."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl_s
        self.clock = clock
        self._logins: OrderedDict[str, Login] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, user_name: str, user_id: str = "") -> tuple[str, Login]:
        """A new session id and its login for ``user_name`` (whose id is ``user_id``)."""
        session_id = secrets.token_urlsafe(32)
        login = Login(user_name, secrets.token_urlsafe(32), self.clock() + self.ttl, user_id)
        with self._lock:
            self._logins[session_id] = login
            while len(self._logins) > MAX_SESSIONS:
                self._logins.popitem(last=False)
        return session_id, login

    def get(self, session_id: str | None) -> Login | None:
        """The live login of a session id, or ``None``."""
        if not session_id or len(session_id) > 128:
            return None
        with self._lock:
            login = self._logins.get(session_id)
            if login is not None and login.expires < self.clock():
                del self._logins[session_id]
                return None
            return login

    def drop(self, session_id: str | None) -> None:
        """Log a session out."""
        if session_id:
            with self._lock:
                self._logins.pop(session_id, None)

    def drop_user(self, user_name: str) -> None:
        """Log every session of ``user_name`` out."""
        with self._lock:
            for key in [k for k, v in self._logins.items() if v.user_name == user_name]:
                del self._logins[key]


def csrf_matches(login: Login, sent: str | None) -> bool:
    """Whether the CSRF header sent is this login's token (constant-time)."""
    return sent is not None and hmac.compare_digest(login.csrf_token.encode(), sent.encode())
