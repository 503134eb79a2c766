"""The words of a conversation's Markdown export, in the UI's language (Catalan, Spanish or
English): its headings and the note under an answer with unverified citations.

The core never imports Qt, so these few words cannot go through Qt's ``tr``; they are a typed
table keyed by archive language code (``lg-cat``, ``lg-spa``, ``lg-eng``), English for any
other code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExportWords:
    """The export's words in one language."""

    untitled: str
    """The heading of a conversation with no title."""
    model: str
    you: str
    assistant: str
    change_plan: str
    unverified: str
    """The note under an answer: ``{bad}`` of ``{total}`` citations unverified, ``{keys}``."""


ENGLISH = ExportWords(
    untitled="Conversation",
    model="Model",
    you="You",
    assistant="Assistant",
    change_plan="Change plan",
    unverified="{bad} of {total} citations unverified (no tool in that run returned {keys}).",
)

EXPORT_WORDS: dict[str, ExportWords] = {
    "lg-eng": ENGLISH,
    "lg-cat": ExportWords(
        untitled="Conversa",
        model="Model",
        you="Tu",
        assistant="Assistent",
        change_plan="Pla de canvis",
        unverified=(
            "{bad} de {total} cites sense verificar (cap eina d'aquella execució no va "
            "retornar {keys})."
        ),
    ),
    "lg-spa": ExportWords(
        untitled="Conversación",
        model="Modelo",
        you="Tú",
        assistant="Asistente",
        change_plan="Plan de cambios",
        unverified=(
            "{bad} de {total} citas sin verificar (ninguna herramienta de esa ejecución "
            "devolvió {keys})."
        ),
    ),
}
"""The export's words by archive language code."""


def export_words(lang: str) -> ExportWords:
    """The export's words in ``lang`` (an archive language code), English when it has none."""
    return EXPORT_WORDS.get(lang, ENGLISH)
