"""Which languages a catalog entry's model writes well enough to answer in.

An entry may declare them (``"languages": ["en", "es"]`` in ``models.json``, ISO 639-1 codes).
When it does not, the answer is taken from its family, by the names it goes by (the model
name, the GGUF file, the label), and only the languages its makers document are counted —
a model is rather trusted with too few languages than too many, because an answer in a
language the model cannot write is nonsense (issue 21: SmolLM2 in Catalan). A local model of
no known family writes English only; a hosted model (OpenAI-compatible server, Anthropic,
scripted test models) of no known family is trusted with every language.

A GGUF file may name its languages in ``general.languages``; discovery writes them into the
entry it makes (:func:`gguf_languages`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.core.models.catalog import ModelEntry

ANY = None
"""No limit: the model writes every language."""

ENGLISH: frozenset[str] = frozenset({"en"})

FAMILIES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"smollm"), ENGLISH),
    (re.compile(r"\bphi[-_ ]?\d"), ENGLISH),
    (re.compile(r"tinyllama"), ENGLISH),
    (re.compile(r"qwen[-_ ]?3"), frozenset({"en", "ca", "es", "fr", "de", "it", "pt"})),
    (re.compile(r"qwen"), frozenset({"en", "es", "fr", "de", "it", "pt"})),
    (re.compile(r"llama[-_ ]?3"), frozenset({"en", "es", "fr", "de", "it", "pt"})),
    (re.compile(r"mistral|mixtral"), frozenset({"en", "es", "fr", "de", "it"})),
    (re.compile(r"gemma[-_ ]?3"), frozenset({"en", "ca", "es", "fr", "de", "it", "pt"})),
    (re.compile(r"salamandra"), frozenset({"en", "ca", "es", "eu", "gl", "fr", "de", "it"})),
)
"""Families by a pattern of their names, first match wins, with the languages their model cards
document (conservatively: Catalan only where it is named)."""

SHORT_CODES = {"lg-cat": "ca", "lg-spa": "es", "lg-eng": "en", "lg-fra": "fr", "lg-deu": "de"}
SHORT_CODES |= {"lg-por": "pt", "lg-ita": "it"}


def family_languages(names: Iterable[str]) -> frozenset[str] | None:
    """The languages of the first family one of ``names`` belongs to (``None``: none known)."""
    text = " ".join(names).lower()
    for pattern, languages in FAMILIES:
        if pattern.search(text):
            return languages
    return None


def entry_languages(entry: ModelEntry) -> frozenset[str] | None:
    """The languages ``entry``'s model writes (``None``: every language; see the module)."""
    if entry.languages:
        return frozenset(entry.languages)
    known = family_languages(n for n in (entry.model, entry.gguf or "", entry.label) if n)
    if known is not None:
        return known
    return ENGLISH if entry.provider == "local" else ANY


def writes(entry: ModelEntry, lang: str) -> bool:
    """Whether ``entry``'s model writes ``lang`` (a Dédalo code such as ``lg-cat``, or an ISO
    639-1 code)."""
    languages = entry_languages(entry)
    return languages is ANY or SHORT_CODES.get(lang, lang) in languages


def gguf_languages(value: object) -> list[str]:
    """The ISO codes a GGUF file's ``general.languages`` value names (``[]``: none usable)."""
    if not isinstance(value, list | tuple):
        return []
    codes = [str(item).strip().lower() for item in value if isinstance(item, str)]
    return list(dict.fromkeys(c for c in codes if re.fullmatch(r"[a-z]{2,3}", c)))
