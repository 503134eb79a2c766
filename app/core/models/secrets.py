"""API keys: read from the entry's environment variable or the OS keyring, never a plain file.

Keys are stored with :func:`store_api_key` in the OS keyring (service ``arxiu``, user = model id).
When no keyring backend is available the functions raise ``ai.keyring_unavailable`` — there is
no silent plaintext fallback. Keys are never logged and never put into error details.
"""

from __future__ import annotations

import os
from typing import Any

from app.core.errors import ModelError
from app.core.models.catalog import ModelEntry
from app.core.phrases import Phrase
from app.core.system_keyring import KeyringUnusable, usable_keyring

SERVICE = "arxiu"


def _keyring() -> Any:
    """The ``keyring`` module with a usable backend.

    Raises:
        ModelError: ``ai.keyring_unavailable`` when the package or a backend is missing.
    """
    try:
        return usable_keyring()
    except KeyringUnusable as error:
        raise _unavailable(str(error)) from error


def _unavailable(reason: str) -> ModelError:
    return ModelError(
        "ai.keyring_unavailable",
        Phrase.of(
            "The system keyring is not available: {reason}. API keys are never stored in a file.",
            reason=reason,
        ),
        hint="Set the model's api_key_env variable instead, or install a keyring backend "
        "(e.g. gnome-keyring / KWallet on Linux).",
        category="environment",
    )


def store_api_key(model_id: str, key: str) -> None:
    """Store the key of ``model_id`` in the OS keyring.

    Raises:
        ModelError: ``ai.keyring_unavailable`` (nothing is written anywhere else).
    """
    keyring = _keyring()
    try:
        keyring.set_password(SERVICE, model_id, key)
    except keyring.errors.KeyringError as error:
        raise _unavailable(type(error).__name__) from None


def delete_api_key(model_id: str) -> bool:
    """Remove the stored key of ``model_id``; ``False`` when there was none or no keyring."""
    try:
        keyring = _keyring()
        keyring.delete_password(SERVICE, model_id)
    except ModelError:
        return False
    except Exception:  # keyring.errors.PasswordDeleteError and backend-specific failures
        return False
    return True


def keyring_key(model_id: str) -> str | None:
    """The key stored in the keyring for ``model_id``, or ``None``.

    Raises:
        ModelError: ``ai.keyring_unavailable``.
    """
    keyring = _keyring()
    try:
        value = keyring.get_password(SERVICE, model_id)
    except keyring.errors.KeyringError as error:
        raise _unavailable(type(error).__name__) from None
    return str(value) if value else None


def api_key_for(entry: ModelEntry, *, required: bool = True) -> str | None:
    """The API key of ``entry``: its ``api_key_env`` variable first, then the keyring.

    Args:
        entry: the catalog entry.
        required: raise when no key is found (``False``: return ``None``).

    Raises:
        ModelError: ``ai.api_key_missing`` when required and not found;
            ``ai.keyring_unavailable`` when only the keyring could hold it and it is unusable.
    """
    if entry.api_key_env:
        value = os.environ.get(entry.api_key_env, "").strip()
        if value:
            return value
    try:
        stored = keyring_key(entry.id)
    except ModelError:
        if required:
            raise
        return None
    if stored or not required:
        return stored
    command = f"arxiu models add --id {entry.id} ... --api-key-stdin"
    hint = (
        Phrase.of(
            "Put the key in the environment variable {variable} or the keyring: `{command}`.",
            variable=entry.api_key_env,
            command=command,
        )
        if entry.api_key_env
        else Phrase.of("Put the key in the keyring: `{command}`.", command=command)
    )
    raise ModelError(
        "ai.api_key_missing",
        Phrase.of('No API key for model "{model}".', model=entry.id),
        hint=hint,
        category="environment",
        details={"model": entry.id},
    )
