"""The password of a shared archive, kept in the OS keyring, never in a settings file.

File → Open shared archive… stores it here when the person asks it to be remembered; every
connection (the app, and the commands given the same URL without a password) finds it again.
The keyring entry is the service ``arxiu-postgresql`` with the account
``USER@HOST:PORT/DATABASE`` read from the URL by libpq's own parser, so ``sslmode`` and the
other options do not change which password is used. A URL that carries its own password, or a
``PGPASSWORD`` in the environment, wins over the keyring (libpq's ``~/.pgpass`` is used when
neither the URL, the variable nor the keyring has one).
"""

from __future__ import annotations

import os
from typing import Any

import psycopg

from app.core.errors import ArchiveError
from app.core.phrases import Phrase
from app.core.system_keyring import KeyringUnusable, usable_keyring

SERVICE = "arxiu-postgresql"
DEFAULT_PORT = "5432"


def account(url: str) -> str | None:
    """The keyring account of ``url`` (``ana@db.example.org:5432/arxiu``), or ``None`` when the
    URL names no user or no host (a local socket login needs no stored password)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return None
    user, host = info.get("user"), info.get("host")
    if not user or not host:
        return None
    database = info.get("dbname") or user
    return f"{user}@{host}:{info.get('port') or DEFAULT_PORT}/{database}"


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password itself."""
    try:
        return bool(psycopg.conninfo.conninfo_to_dict(url).get("password"))
    except psycopg.ProgrammingError:
        return False


def store_password(url: str, password: str) -> None:
    """Remember ``password`` for the archive at ``url`` in the OS keyring.

    Raises:
        ArchiveError: ``archive.keyring_unavailable`` (nothing is written anywhere else), or
            ``archive.pg_url_invalid`` when the URL names no user and host.
    """
    name = account(url)
    if name is None:
        raise ArchiveError(
            "archive.pg_url_invalid",
            "A password can only be remembered for a URL with a user and a host.",
            hint="Write it as postgresql://USER@HOST:PORT/DATABASE.",
            category="input",
        )
    keyring = _keyring()
    try:
        keyring.set_password(SERVICE, name, password)
    except keyring.errors.KeyringError as error:
        raise _unavailable(type(error).__name__) from None


def stored_password(url: str) -> str | None:
    """The password remembered for ``url``; ``None`` when none is, or no keyring is usable
    (then libpq's own sources, ``PGPASSWORD`` and ``~/.pgpass``, still apply)."""
    name = account(url)
    if name is None:
        return None
    try:
        keyring = usable_keyring()
        value = keyring.get_password(SERVICE, name)
    except Exception:  # KeyringUnusable, or a backend's own failure: "none stored" here
        return None
    return str(value) if value else None


def forget_password(url: str) -> bool:
    """Remove the password remembered for ``url``; ``False`` when there was none."""
    name = account(url)
    if name is None:
        return False
    try:
        usable_keyring().delete_password(SERVICE, name)
    except Exception:  # KeyringUnusable, PasswordDeleteError, a backend's own failure
        return False
    return True


_SESSION: dict[str, str] = {}
"""Passwords given for this process only (typed, not to be remembered), by account."""


def use_for_session(url: str, password: str) -> None:
    """Use ``password`` for ``url``'s account until this process ends; nothing is written."""
    name = account(url)
    if name is not None and password:
        _SESSION[name] = password


def password_for(url: str) -> str | None:
    """The password a connection to ``url`` should send: ``None`` when the URL or
    ``PGPASSWORD`` gives one (libpq uses those), else one given for this session, else the one
    remembered in the keyring, if any."""
    if has_password(url) or os.environ.get("PGPASSWORD"):
        return None
    name = account(url)
    return _SESSION.get(name) if name in _SESSION else stored_password(url)


def _keyring() -> Any:
    try:
        return usable_keyring()
    except KeyringUnusable as error:
        raise _unavailable(str(error)) from error


def _unavailable(reason: str) -> ArchiveError:
    return ArchiveError(
        "archive.keyring_unavailable",
        Phrase.of(
            "The system keyring is not available: {reason}. "
            "The password is never stored in a file.",
            reason=reason,
        ),
        hint="Give the password each time, or through PGPASSWORD or ~/.pgpass, or install a "
        "keyring backend (e.g. gnome-keyring / KWallet on Linux).",
        category="environment",
        details={"reason": reason},
    )
