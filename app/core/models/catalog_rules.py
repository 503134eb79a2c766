"""Validation of raw model catalog entries, exactly as the seed's ``DEDALO_AGENT_MODELS`` rules.

* ``id`` matches ``^[a-z0-9_-]{1,64}$`` and is unique; ``label`` is 1–120 characters;
* ``provider`` is one of :data:`PROVIDERS`; ``model`` is required (``local``: optional);
* ``openai_compatible`` requires ``endpoint`` (http/https) and ``egress``;
* ``anthropic`` is always ``external`` (an entry saying ``local`` is invalid);
* ``api_key_env`` names a variable ending in ``_API_KEY``, ``_KEY`` or ``_TOKEN``;
* ``vision``, ``default`` and ``supports_tools`` are booleans; ``max_tokens`` a positive integer;
  ``timeout_s`` a positive number ≤ 3600; ``efforts`` distinct effort names;
* ``gguf`` and ``context_size`` only for ``local``; at most one entry is the default;
* ``languages`` distinct language codes (``en``, ``ca``, ``es``…: what the model writes);
* any other key is refused (a misspelt key, or a secret pasted into the file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, TypeGuard

from app.core.errors import ModelError, english_of
from app.core.phrases import Phrase

Provider = Literal["local", "openai_compatible", "anthropic", "scripted"]
Egress = Literal["local", "external"]

RawEntry = Mapping[str, object]
"""One catalog entry as ``models.json`` holds it: any JSON values, until validated."""


class EntryFields(TypedDict, total=False):
    """A catalog entry the app itself writes (discovery, the settings dialog, the CLI)."""

    id: str
    label: str
    provider: Provider
    model: str
    endpoint: str
    egress: Egress
    vision: bool
    max_tokens: int
    timeout_s: float
    efforts: list[str]
    api_key_env: str
    gguf: str
    default: bool
    supports_tools: bool
    context_size: int
    languages: list[str]


PROVIDERS: tuple[str, ...] = ("local", "openai_compatible", "anthropic", "scripted")
EGRESS: tuple[str, ...] = ("local", "external")
ID_RE = re.compile(r"^[a-z0-9_-]{1,64}$")
KEY_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(_API_KEY|_KEY|_TOKEN)$")
EFFORT_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
LANGUAGE_RE = re.compile(r"^[a-z]{2,3}$")
MAX_LANGUAGES = 64
URL_RE = re.compile(r"^https?://[^\s/]+(/\S*)?$")
MAX_TIMEOUT_S = 3600
MAX_TOKENS_LIMIT = 1_000_000
MAX_EFFORTS = 8
KNOWN_KEYS = frozenset(
    {
        "id",
        "label",
        "provider",
        "model",
        "endpoint",
        "egress",
        "vision",
        "max_tokens",
        "timeout_s",
        "efforts",
        "api_key_env",
        "gguf",
        "default",
        "supports_tools",
        "context_size",
        "languages",
    }
)
SECRET_LIKE = re.compile(r"(api_?key|secret|token|password)$", re.IGNORECASE)


def invalid(
    reason: str | Phrase, *, entry: str | int | None, field: str | None = None
) -> ModelError:
    """The ``ai.model_catalog_invalid`` error naming ``entry`` (an id, or a position)."""
    if entry is None:
        where = Phrase.of("the model catalog")
    elif isinstance(entry, int):
        where = Phrase.of("model catalog entry #{n}", n=entry + 1)
    else:
        where = Phrase.of('model catalog entry "{entry}"', entry=entry)
    details: dict[str, Any] = {"entry": entry, "reason": english_of(reason)}
    if field:
        details["field"] = field
    return ModelError(
        "ai.model_catalog_invalid",
        Phrase.of(
            "The assistant is disabled: {where} is invalid: {reason}.", where=where, reason=reason
        ),
        hint="Fix or remove the entry with `arxiu models` or in models.json.",
        category="environment",
        details=details,
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_identity(item: RawEntry, name: str | int) -> None:
    ident = item.get("id")
    if not isinstance(ident, str) or not ID_RE.match(ident):
        reason = Phrase.of("id must match {pattern}", pattern="^[a-z0-9_-]{1,64}$")
        raise invalid(reason, entry=name, field="id")
    label = item.get("label")
    if not isinstance(label, str) or not 1 <= len(label.strip()) <= 120 or len(label) > 120:
        raise invalid(Phrase.of("label must be 1–120 characters"), entry=name, field="label")
    unknown = sorted(set(item) - KNOWN_KEYS)
    if unknown:
        keys = ", ".join(unknown)
        reason = (
            Phrase.of("unknown key(s) {keys} (secrets belong in the keyring)", keys=keys)
            if any(SECRET_LIKE.search(k) for k in unknown)
            else Phrase.of("unknown key(s) {keys}", keys=keys)
        )
        raise invalid(reason, entry=name, field=unknown[0])


def _check_provider(item: RawEntry, name: str | int) -> None:
    provider = item.get("provider")
    if provider not in PROVIDERS:
        reason = Phrase.of("provider must be one of {names}", names=", ".join(PROVIDERS))
        raise invalid(reason, entry=name, field="provider")
    model = item.get("model")
    if provider != "local" and (not isinstance(model, str) or not model.strip()):
        raise invalid(Phrase.of("model is required"), entry=name, field="model")
    if provider == "local" and model is not None and (not isinstance(model, str) or not model):
        reason = Phrase.of("model must be a non-empty string")
        raise invalid(reason, entry=name, field="model")
    endpoint = item.get("endpoint")
    if provider == "openai_compatible" and endpoint is None:
        reason = Phrase.of("endpoint is required for openai_compatible")
        raise invalid(reason, entry=name, field="endpoint")
    if endpoint is not None and (not isinstance(endpoint, str) or not URL_RE.match(endpoint)):
        reason = Phrase.of("endpoint must be an http(s) URL")
        raise invalid(reason, entry=name, field="endpoint")
    egress = item.get("egress")
    if provider == "openai_compatible" and egress is None:
        reason = Phrase.of("egress is required for openai_compatible")
        raise invalid(reason, entry=name, field="egress")
    if egress is not None and egress not in EGRESS:
        reason = Phrase.of("egress must be local or external")
        raise invalid(reason, entry=name, field="egress")
    if provider == "anthropic" and egress not in (None, "external"):
        reason = Phrase.of("anthropic models are always external")
        raise invalid(reason, entry=name, field="egress")
    for key in ("gguf", "context_size"):
        if key in item and provider != "local":
            reason = Phrase.of("{key} is only for local models", key=key)
            raise invalid(reason, entry=name, field=key)


def _check_options(item: RawEntry, name: str | int) -> None:
    key_env = item.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not KEY_ENV_RE.match(key_env)):
        reason = Phrase.of("api_key_env must be a variable name ending in _API_KEY, _KEY or _TOKEN")
        raise invalid(reason, entry=name, field="api_key_env")
    for key in ("vision", "default", "supports_tools"):
        if key in item and not isinstance(item[key], bool):
            raise invalid(Phrase.of("{key} must be true or false", key=key), entry=name, field=key)
    max_tokens = item.get("max_tokens")
    if max_tokens is not None and (
        not _is_int(max_tokens) or not 0 < max_tokens <= MAX_TOKENS_LIMIT
    ):
        reason = Phrase.of("max_tokens must be a positive integer")
        raise invalid(reason, entry=name, field="max_tokens")
    timeout = item.get("timeout_s")
    if timeout is not None and (not _is_number(timeout) or not 0 < timeout <= MAX_TIMEOUT_S):
        reason = Phrase.of(
            "timeout_s must be a number of seconds in (0, {most}]", most=MAX_TIMEOUT_S
        )
        raise invalid(reason, entry=name, field="timeout_s")
    context = item.get("context_size")
    if context is not None and (not _is_int(context) or not 256 <= context <= 1_048_576):
        reason = Phrase.of("context_size must be an integer ≥ 256")
        raise invalid(reason, entry=name, field="context_size")
    gguf = item.get("gguf")
    if gguf is not None and (not isinstance(gguf, str) or not gguf.strip()):
        raise invalid(Phrase.of("gguf must be a file path"), entry=name, field="gguf")
    _check_efforts(item.get("efforts"), name)
    _check_languages(item.get("languages"), name)


def _check_languages(languages: object, name: str | int) -> None:
    if languages is None:
        return
    if (
        not isinstance(languages, list)
        or not 0 < len(languages) <= MAX_LANGUAGES
        or not all(isinstance(code, str) and LANGUAGE_RE.match(code) for code in languages)
        or len(set(languages)) != len(languages)
    ):
        reason = Phrase.of("languages must be a list of distinct language codes such as en, ca, es")
        raise invalid(reason, entry=name, field="languages")


def _check_efforts(efforts: Any, name: str | int) -> None:
    if efforts is None:
        return
    if (
        not isinstance(efforts, list)
        or len(efforts) > MAX_EFFORTS
        or not all(isinstance(e, str) and EFFORT_RE.match(e) for e in efforts)
        or len(set(efforts)) != len(efforts)
    ):
        reason = Phrase.of(
            "efforts must be a list of at most {most} distinct effort names", most=MAX_EFFORTS
        )
        raise invalid(reason, entry=name, field="efforts")


def validate_entry(item: Any, position: int) -> None:
    """Check one raw entry; raises ``ai.model_catalog_invalid`` naming it."""
    if not isinstance(item, dict):
        raise invalid(Phrase.of("an entry must be an object"), entry=position)
    ident = item.get("id")
    name: str | int = ident if isinstance(ident, str) and ident else position
    _check_identity(item, name)
    _check_provider(item, name)
    _check_options(item, name)


def validate_entries(raw: list[Any]) -> None:
    """Check every raw entry and the rules across entries (unique ids, one default).

    Raises:
        ModelError: ``ai.model_catalog_invalid`` naming the first invalid entry.
    """
    seen: set[str] = set()
    defaults: list[str] = []
    for position, item in enumerate(raw):
        validate_entry(item, position)
        ident = item["id"]
        if ident in seen:
            reason = Phrase.of("the id is used by another entry")
            raise invalid(reason, entry=ident, field="id")
        seen.add(ident)
        if item.get("default") is True:
            defaults.append(ident)
    if len(defaults) > 1:
        reason = Phrase.of("only one entry may be the default")
        raise invalid(reason, entry=defaults[1], field="default")
