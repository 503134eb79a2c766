"""The API's users: salted scrypt password hashes, permissions and bearer tokens.

Users live in ``api_users.json`` in the config folder (never in an archive): for each name the
immutable random id (``u_…``), the scrypt parameters, salt and hash of the password, the two
permissions, and the SHA-256 of each bearer token issued (a token itself is shown once, when it
is issued, and never stored). The file is written atomically with mode 0600 and re-read on
every look-up, so ``arxiu users`` changes take effect on a running server at once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core import paths
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

USERS_FILE = "api_users.json"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
MAX_PASSWORD_CHARS = 1024
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
SALT_BYTES = 16
TOKEN_PREFIX = "arxiu_"
_DUMMY_SALT = b"\0" * SALT_BYTES


@dataclass(frozen=True)
class User:
    """A user of the API and what they may do."""

    name: str
    can_write: bool
    can_read_restricted: bool
    id: str
    """Random and immutable, made when the user is added: what sessions, runs, logins and
    plans are keyed by, so a removed and re-added name starts with nothing of the old one."""


def default_users_path() -> Path:
    """Where the users file lives: the config folder (``ARXIU_HOME`` when set)."""
    return paths.config_dir() / USERS_FILE


def user_error(code: str, message: str | Phrase, hint: str | Phrase | None = None) -> ArxiuError:
    """A coded error about users (category ``input``)."""
    return ArxiuError(code, message, hint=hint, category="input")


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=128 * r * n * 2, dklen=32
    )


def hash_password(password: str) -> dict[str, Any]:
    """A fresh salted scrypt hash of ``password`` with its parameters."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return {
        "scheme": "scrypt",
        "n": SCRYPT_N,
        "r": SCRYPT_R,
        "p": SCRYPT_P,
        "salt": salt.hex(),
        "hash": digest.hex(),
    }


def verify_password(password: str, stored: dict[str, Any]) -> bool:
    """Whether ``password`` matches the stored hash (constant-time comparison)."""
    try:
        salt = bytes.fromhex(str(stored["salt"]))
        expected = bytes.fromhex(str(stored["hash"]))
        digest = _scrypt(password, salt, int(stored["n"]), int(stored["r"]), int(stored["p"]))
    except (KeyError, ValueError, TypeError):
        return False
    return hmac.compare_digest(digest, expected)


def new_user_id() -> str:
    """A fresh random user id."""
    return "u_" + secrets.token_urlsafe(18)


def user_id(row: dict[str, Any]) -> str:
    """The id of a stored user row; for a row written before ids existed, one derived from its
    password salt (random, fixed until the row is next written, when it is stored)."""
    stored = row.get("id")
    if isinstance(stored, str) and stored:
        return stored
    password = row.get("password")
    salt = str(password.get("salt", "")) if isinstance(password, dict) else ""
    return "u_legacy_" + hashlib.sha256(salt.encode("utf-8")).hexdigest()[:24]


def _token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """``name`` if it is a valid user name."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise user_error(
            "user.invalid",
            "A user name is 1-64 letters, digits or . _ @ - and starts with a letter or digit.",
            hint="Pick another name.",
        )
    return name


def check_password(password: str) -> str:
    """``password`` if it is acceptable (not empty, at most 1,024 characters)."""
    if not isinstance(password, str) or not password or len(password) > MAX_PASSWORD_CHARS:
        raise user_error(
            "user.password_invalid",
            Phrase.of("A password must be 1-{most} characters.", most=MAX_PASSWORD_CHARS),
            hint="Type another password.",
        )
    return password


class UserStore:
    """The users file at ``path`` (default: ``api_users.json`` in the config folder)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_users_path()
        self._lock = threading.Lock()

    # -- file --------------------------------------------------------------------------------
    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise ArxiuError(
                "user.store_unreadable",
                Phrase.of(
                    "The users file {path} cannot be read: {why}",
                    path=str(self.path),
                    why=str(error),
                ),
                hint="Restore it from a backup, or delete it and add the users again.",
            ) from error
        users = data.get("users") if isinstance(data, dict) else None
        return {str(k): v for k, v in users.items() if isinstance(v, dict)} if users else {}

    def _write(self, users: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": 1, "users": users}, handle, indent=2, sort_keys=True)
        os.replace(temporary, self.path)

    def _get(self, users: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
        found = users.get(name)
        if found is None:
            raise user_error(
                "user.unknown",
                Phrase.of("There is no user {name!r}.", name=name),
                hint="See `arxiu users list`.",
            )
        found["id"] = user_id(found)  # a file older than ids: this user's id is kept now
        return found

    @staticmethod
    def _user(name: str, row: dict[str, Any]) -> User:
        return User(
            name, bool(row.get("can_write")), bool(row.get("can_read_restricted")), user_id(row)
        )

    # -- management --------------------------------------------------------------------------
    def add(
        self,
        name: str,
        password: str,
        *,
        can_write: bool = False,
        can_read_restricted: bool = False,
    ) -> User:
        """Add a user (``user.exists`` when the name is taken)."""
        check_name(name)
        row = {
            "id": new_user_id(),
            "password": hash_password(check_password(password)),
            "can_write": can_write,
            "can_read_restricted": can_read_restricted,
            "tokens": [],
        }
        with self._lock:
            users = self._read()
            if name in users:
                raise user_error(
                    "user.exists",
                    Phrase.of("User {name!r} already exists.", name=name),
                    hint="Use `arxiu users passwd`.",
                )
            users[name] = row
            self._write(users)
        return self._user(name, row)

    def remove(self, name: str) -> None:
        """Remove a user and every token issued to them."""
        with self._lock:
            users = self._read()
            self._get(users, name)
            del users[name]
            self._write(users)

    def set_password(self, name: str, password: str) -> None:
        """Give a user a new password (their tokens stay valid)."""
        digest = hash_password(check_password(password))
        with self._lock:
            users = self._read()
            self._get(users, name)["password"] = digest
            self._write(users)

    def list(self) -> list[User]:
        """Every user, by name."""
        users = self._read()
        return [self._user(name, users[name]) for name in sorted(users)]

    def get(self, name: str) -> User | None:
        """One user, or ``None``."""
        row = self._read().get(name)
        return self._user(name, row) if row is not None else None

    # -- authentication ----------------------------------------------------------------------
    def authenticate(self, name: str, password: str) -> User | None:
        """The user when ``password`` is theirs; ``None`` otherwise (same cost either way)."""
        if not isinstance(name, str) or not isinstance(password, str):
            return None
        if len(password) > MAX_PASSWORD_CHARS:
            return None
        row = self._read().get(name)
        if row is None or not isinstance(row.get("password"), dict):
            _scrypt(password, _DUMMY_SALT, SCRYPT_N, SCRYPT_R, SCRYPT_P)
            return None
        return self._user(name, row) if verify_password(password, row["password"]) else None

    def issue_token(self, name: str) -> str:
        """A new bearer token for ``name`` (shown once; only its SHA-256 is stored)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._lock:
            users = self._read()
            row = self._get(users, name)
            row["tokens"] = [*row.get("tokens", []), _token_digest(token)]
            self._write(users)
        return token

    def user_for_token(self, token: str) -> User | None:
        """The user a bearer token was issued to, or ``None``."""
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) or len(token) > 256:
            return None
        digest = _token_digest(token)
        for name, row in self._read().items():
            if any(hmac.compare_digest(digest, str(t)) for t in row.get("tokens", [])):
                return self._user(name, row)
        return None
