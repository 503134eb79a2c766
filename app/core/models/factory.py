"""Build the :class:`~app.core.models.base.ChatModel` for a catalog entry.

Provider modules are imported only when their provider is used, so the core loads quickly and
the local model's machinery is untouched by a run on an external model (and vice versa).
"""

from __future__ import annotations

from typing import Any

from app.core.errors import ModelError
from app.core.models.base import ChatModel
from app.core.models.catalog import ModelEntry
from app.core.phrases import Phrase


def create_model(entry: ModelEntry, **options: Any) -> ChatModel:
    """The chat model for ``entry``.

    Args:
        entry: a validated catalog entry.
        **options: passed to the provider's constructor (e.g. ``client=`` for the HTTP
            providers, ``available_memory=`` for the local one).

    Raises:
        ModelError: ``ai.model_catalog_invalid`` for an unknown provider.
    """
    if entry.provider == "local":
        from app.core.models.local_llama import LocalLlamaModel

        return LocalLlamaModel(entry, **options)
    if entry.provider == "openai_compatible":
        from app.core.models.openai_compatible import OpenAICompatibleModel

        options.setdefault("api_key", _key_source(entry, required=False))
        return OpenAICompatibleModel(entry, **options)
    if entry.provider == "anthropic":
        from app.core.models.anthropic import AnthropicModel

        options.setdefault("api_key", _key_source(entry, required=True))
        return AnthropicModel(entry, **options)
    if entry.provider == "scripted":
        from app.core.models.scripted import ScriptedModel

        return ScriptedModel.from_entry(entry, **options)
    raise ModelError(
        "ai.model_catalog_invalid",
        Phrase.of(
            'Model "{model}" has an unknown provider "{provider}".',
            model=entry.id,
            provider=entry.provider,
        ),
        details={"entry": entry.id, "field": "provider"},
    )


def _key_source(entry: ModelEntry, *, required: bool) -> Any:
    """A callable that looks the key up on first use (environment variable, then keyring)."""
    from app.core.models.secrets import api_key_for

    found: list[str] = []

    def key() -> str | None:
        if not found:
            value = api_key_for(entry, required=required)
            if value is None:
                return None
            found.append(value)
        return found[0]

    return key
