"""Fixtures for the model tests: keyrings, the shared local model, the real llama.cpp server."""

from __future__ import annotations

from tests.core.models.keyring_fake import memory_keyring, no_keyring
from tests.core.models.llama_fixtures import llama_server, local_model

__all__ = ["llama_server", "local_model", "memory_keyring", "no_keyring"]
