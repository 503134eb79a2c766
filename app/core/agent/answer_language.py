"""Whether the core composes a run's answer itself, and in which language.

The core composes the answer (see :mod:`app.core.agent.composed_answer`) instead of letting the
model write it

* when the model does not write the question's language (the catalog entry's languages, see
  :mod:`app.core.models.model_languages`): no free prose from a model that cannot write it;
* for a question that asks for records (:mod:`app.core.agent.list_questions`) on the bundled
  model, which sees only a few hits and invents numbers: the list is complete and exact.

A run in write mode is never composed (its model proposes the change plan). The question's
language is detected from its words (:func:`app.core.archive.language.detect`); a question
too short to tell is taken to be in the UI's language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.agent.list_questions import list_noun, noun_language
from app.core.archive.language import detect
from app.core.models.catalog import ModelEntry
from app.core.models.model_languages import writes

Reason = Literal["language", "list"]


@dataclass(frozen=True)
class Composition:
    """A run whose answer the core composes.

    Attributes:
        lang: the answer's language (a Dédalo code: the question's).
        noun: the records' noun as the question says it ("entrevistes"), if it asks for records.
        reason: ``language`` (the model does not write ``lang``) or ``list`` (a list question
            on the bundled model).
    """

    lang: str
    noun: str | None
    reason: Reason


def question_language(question: str, fallback: str, noun: str | None = None) -> str:
    """The Dédalo code of ``question``'s language: its words', else its records' ``noun``'s
    when that is one language's (:func:`~app.core.agent.list_questions.noun_language`),
    else ``fallback``."""
    return detect(question) or noun_language(noun) or fallback


def composition(
    entry: ModelEntry, question: str, mode: str, fallback_lang: str
) -> Composition | None:
    """How the run of ``question`` on ``entry`` is composed (``None``: the model answers)."""
    if mode == "write":
        return None
    noun = list_noun(question)
    lang = question_language(question, fallback_lang, noun)
    if not writes(entry, lang):
        return Composition(lang, noun, "language")
    if noun is not None and entry.bundled:
        return Composition(lang, noun, "list")
    return None
