"""The model catalog: the user's ``models.json`` plus the built-in local model.

The file holds ``{"models": [entry, ...]}`` (a bare list is accepted too). Every entry is
validated by :mod:`app.core.models.catalog_rules`; one invalid entry makes the whole catalog
invalid (``ai.model_catalog_invalid``, naming the entry) — never a partial list. Secrets are never
part of an entry: an entry only names the environment variable that holds its key, and keys stored
through the CLI live in the OS keyring (:mod:`app.core.models.secrets`).

An entry with id ``local`` in the file replaces the built-in local model (to point it at another
GGUF or change its context size); any other id must be unique.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from app.core import paths
from app.core.errors import ModelError
from app.core.models.catalog_rules import (
    Egress,
    EntryFields,
    Provider,
    RawEntry,
    invalid,
    validate_entries,
)
from app.core.phrases import Phrase

BUILTIN_ID = "local"
PUBLIC_KEYS = ("id", "label", "egress", "vision", "default", "efforts")


class PublicModel(TypedDict):
    """The secret-free projection of an entry that front ends see."""

    id: str
    label: str
    egress: Egress
    vision: bool
    default: bool
    efforts: list[str]


@dataclass(frozen=True)
class ModelEntry:
    """One model the archivist can pick (no secrets: ``api_key_env`` only names a variable).

    Attributes:
        id: stable identifier, ``^[a-z0-9_-]{1,64}$``.
        label: what the pickers show (1–120 characters).
        provider: ``local``, ``openai_compatible``, ``anthropic`` or ``scripted``.
        model: the provider's model name (for ``local``: a display name of the GGUF).
        endpoint: base URL of the server (``.../v1`` for OpenAI-compatible servers).
        egress: ``local`` when nothing leaves the workstation, else ``external``.
        vision: whether images may be sent.
        max_tokens: the most tokens one reply may use.
        timeout_s: idle timeout of a stream, in seconds (≤ 3600); keep-alives do not reset
            it, and a whole turn may last ten times it, at most 15 minutes (or ``timeout_s``
            itself when longer): see :mod:`app.core.models.stream_limits`.
        efforts: reasoning effort levels the model offers (empty: none).
        api_key_env: environment variable holding the key (``*_API_KEY``/``*_KEY``/``*_TOKEN``).
        gguf: path of the GGUF file (``local`` only; ``None``: the bundled SmolLM2).
        default: whether the pickers preselect it.
        supports_tools: whether the model plans tool calls itself (``False``: the agent grounds).
        context_size: context window in tokens for ``local`` models (``None``: the model's own,
            capped at 8192).
        languages: the languages the model writes well, as ISO 639-1 codes (empty: not
            declared; :mod:`app.core.models.model_languages` then decides from its family).
    """

    id: str
    label: str
    provider: Provider
    model: str
    endpoint: str | None = None
    egress: Egress = "local"
    vision: bool = False
    max_tokens: int = 1024
    timeout_s: float = 120.0
    efforts: tuple[str, ...] = ()
    api_key_env: str | None = None
    gguf: str | None = None
    default: bool = False
    supports_tools: bool = True
    context_size: int | None = None
    languages: tuple[str, ...] = ()

    @property
    def bundled(self) -> bool:
        """Whether this is the bundled SmolLM2 (a local entry naming no GGUF of its own)."""
        return self.provider == "local" and self.gguf is None

    def public(self) -> PublicModel:
        """The secret-free projection front ends see."""
        return {
            "id": self.id,
            "label": self.label,
            "egress": self.egress,
            "vision": self.vision,
            "default": self.default,
            "efforts": list(self.efforts),
        }


def builtin_fields() -> EntryFields:
    """The bundled model's entry as ``models.json`` would hold it (to replace it there)."""
    return {
        "id": BUILTIN_ID,
        "label": "SmolLM2 135M (local)",
        "provider": "local",
        "model": "SmolLM2-135M-Instruct",
        "egress": "local",
        "max_tokens": 512,
        "supports_tools": False,
        "languages": ["en"],
    }


def builtin_local() -> ModelEntry:
    """The bundled SmolLM2-135M-Instruct model: works offline, nothing leaves the machine;
    it writes English only."""
    return _entry_from_dict(builtin_fields())


@dataclass(frozen=True)
class Catalog:
    """The validated list of models, built-in first, exactly one of them the default."""

    entries: tuple[ModelEntry, ...]

    def __iter__(self) -> Iterator[ModelEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def default_id(self) -> str:
        """The id of the entry the pickers preselect."""
        for entry in self.entries:
            if entry.default:
                return entry.id
        return self.entries[0].id

    def ids(self) -> list[str]:
        """Every model id, in catalog order."""
        return [entry.id for entry in self.entries]

    def get(self, model_id: str | None = None) -> ModelEntry:
        """The entry ``model_id`` (the default when ``None``).

        Raises:
            ModelError: ``ai.model_unknown`` when no entry has that id.
        """
        wanted = model_id or self.default_id
        for entry in self.entries:
            if entry.id == wanted:
                return entry
        raise ModelError(
            "ai.model_unknown",
            Phrase.of('Unknown model "{model}" — pick one from the model list.', model=wanted),
            hint="Run `arxiu models list` to see the available models.",
            category="input",
            details={"model": wanted, "available": self.ids()},
        )

    def public(self) -> list[PublicModel]:
        """The secret-free projection: ``{id, label, egress, vision, default, efforts}`` each."""
        return [entry.public() for entry in self.entries]


def _entry_from_dict(data: RawEntry) -> ModelEntry:
    """The entry ``data`` describes (already validated: its values have their types)."""
    values: dict[str, Any] = dict(data)
    for key in ("efforts", "languages"):
        if key in values:
            values[key] = tuple(values[key])
    if "timeout_s" in values:
        values["timeout_s"] = float(values["timeout_s"])
    if values.get("provider") == "local":
        values.setdefault("model", Path(values["gguf"]).stem if values.get("gguf") else "local")
        values.setdefault("supports_tools", False)
    if values.get("provider") == "anthropic":
        values.setdefault("endpoint", "https://api.anthropic.com")
        values.setdefault("egress", "external")
    return ModelEntry(**values)


def catalog_from_data(raw: Sequence[RawEntry]) -> Catalog:
    """Validate raw entries (as read from ``models.json``) and build the catalog.

    Raises:
        ModelError: ``ai.model_catalog_invalid`` naming the first invalid entry.
    """
    validate_entries(list(raw))
    user = [_entry_from_dict(item) for item in raw]
    builtin = builtin_local()
    entries = user if any(entry.id == BUILTIN_ID for entry in user) else [builtin, *user]
    if not any(entry.default for entry in entries):
        first = entries[0]
        entries[0] = ModelEntry(**{**first.__dict__, "default": True})
    return Catalog(tuple(entries))


def read_raw_entries(path: Path) -> list[dict[str, object]]:
    """The raw entries of a catalog file (``[]`` when the file does not exist).

    Raises:
        ModelError: ``ai.model_catalog_invalid`` when the file is not a JSON catalog.
    """
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        reason = Phrase.of(
            "the file {path} cannot be read as JSON ({error})", path=str(path), error=str(error)
        )
        raise invalid(reason, entry=None) from error
    except RecursionError as error:
        reason = Phrase.of("the file {path} is nested too deeply", path=str(path))
        raise invalid(reason, entry=None) from error
    if isinstance(data, dict) and set(data) <= {"models"}:
        data = data.get("models", [])
    if not isinstance(data, list):
        reason = Phrase.of(
            "{path} must hold {shape}, a list of entries", path=str(path), shape='{"models": [...]}'
        )
        raise invalid(reason, entry=None)
    for position, item in enumerate(data):
        if not isinstance(item, dict):  # add/remove look entries up by id before validating
            raise invalid(Phrase.of("an entry must be an object"), entry=position)
    return data  # each entry is checked by catalog_from_data


def load_catalog(path: Path | None = None) -> Catalog:
    """The catalog from ``path`` (default: the user's ``models.json``) plus the built-in model.

    A missing file gives just the built-in local model.

    Raises:
        ModelError: ``ai.model_catalog_invalid`` when any entry (or the file) is invalid.
    """
    return catalog_from_data(read_raw_entries(path or paths.catalog_file()))


def save_catalog(raw: Sequence[RawEntry], path: Path | None = None) -> Catalog:
    """Validate ``raw`` entries and write them atomically; returns the new catalog.

    Raises:
        ModelError: ``ai.model_catalog_invalid`` (and nothing is written).
    """
    catalog = catalog_from_data(raw)
    target = path or paths.catalog_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"models": [dict(item) for item in raw]}, ensure_ascii=False, indent=2)
    text += "\n"
    fd, tmp = tempfile.mkstemp(prefix=".models-", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return catalog


def add_entry(entry: RawEntry, path: Path | None = None) -> Catalog:
    """Add (or, with the same id, replace) one raw entry in the catalog file.

    Setting ``default`` on the new entry clears it on the others.
    """
    raw = read_raw_entries(path or paths.catalog_file())
    if entry.get("default") is True:
        raw = [{k: v for k, v in item.items() if k != "default"} for item in raw]
    kept: list[RawEntry] = [item for item in raw if item.get("id") != entry.get("id")]
    return save_catalog([*kept, entry], path)


def set_languages(model_id: str, languages: Sequence[str], path: Path | None = None) -> Catalog:
    """Declare the languages entry ``model_id``'s model writes (ISO codes; none: its family's,
    see :mod:`app.core.models.model_languages`), in place in the catalog file; the built-in
    model is written into the file to be changed.

    Raises:
        ModelError: ``ai.model_unknown`` for no such entry, ``ai.model_catalog_invalid`` for
            codes that are not language codes (nothing is written).
    """
    raw: list[dict[str, object]] = [
        dict(item) for item in read_raw_entries(path or paths.catalog_file())
    ]
    at = next((n for n, item in enumerate(raw) if item.get("id") == model_id), None)
    if at is None:
        if model_id != BUILTIN_ID:
            load_catalog(path).get(model_id)  # raises ai.model_unknown
        raw.insert(0, dict(builtin_fields()))
        at = 0
    entry = raw[at]
    entry.pop("languages", None)
    if languages:
        entry["languages"] = list(languages)
    return save_catalog(raw, path)


def remove_entry(model_id: str, path: Path | None = None) -> Catalog:
    """Remove the entry ``model_id`` from the catalog file.

    Raises:
        ModelError: ``ai.model_unknown`` when the file has no such entry (the built-in model
            cannot be removed).
    """
    raw = read_raw_entries(path or paths.catalog_file())
    kept = [item for item in raw if item.get("id") != model_id]
    if len(kept) == len(raw):
        hint = "The built-in local model cannot be removed." if model_id == BUILTIN_ID else None
        raise ModelError(
            "ai.model_unknown",
            Phrase.of('The catalog file has no model "{model}".', model=model_id),
            hint=hint or "Run `arxiu models list` to see the models.",
            category="input",
            details={"model": model_id},
        )
    return save_catalog(kept, path)
