"""The OS keyring (Secret Service, KWallet, macOS Keychain, Windows Credential Locker), or why
it cannot be used: where Arxiu keeps what must never be in a file (API keys, the password of
a shared archive). There is no plaintext fallback."""

from __future__ import annotations

from typing import Any


class KeyringUnusable(Exception):
    """No usable keyring: the package or a backend is missing, or the backend failed."""


def usable_keyring() -> Any:
    """The ``keyring`` module, with a usable backend.

    Raises:
        KeyringUnusable: with the reason, in words.
    """
    try:
        import keyring
        from keyring.backends import fail
    except ImportError as error:
        raise KeyringUnusable("the keyring package is not installed") from error
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
        raise KeyringUnusable(f"no usable keyring backend ({type(backend).__name__})")
    return keyring
