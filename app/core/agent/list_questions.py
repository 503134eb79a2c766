"""Questions that ask for records: "Which interviews…", "Quines entrevistes…", "¿Qué documentos…".

Such a question wants a list, and a complete one: every record the search finds relevant, not
the few a small model names. A question is a list question when a question word (which, what,
quines, quins, qué, cuáles…) is followed by a plural noun for records (interviews, records,
documents, entrevistes, registres, entrevistas, registros…) with only :data:`FILLERS` between
them. The noun is
kept as the question writes it, so that a composed answer can say "He trobat 9 entrevistes".
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


QUESTION_WORDS = _words("which what quines quins quina quin què qué cuáles cuál")
"""Question words (not the bare relatives "que", "cual": "les famílies que…")."""
NOUNS_BY_LANGUAGE = {
    "lg-eng": _words(
        "interviews records documents files items photographs photos images letters testimonies"
    ),
    "lg-cat": _words(
        "entrevistes registres documents fitxes fotografies fotos imatges cartes testimonis"
    ),
    "lg-spa": _words(
        "entrevistas registros documentos fichas fotografías fotos imágenes cartas testimonios"
    ),
}
RECORD_NOUNS = frozenset().union(*NOUNS_BY_LANGUAGE.values())
"""Plural nouns only: "which interview is the oldest" asks for one record, not a list."""
FILLERS = _words("of the all de les els las los d totes tots todas todos")
"""The words that may stand between the question word and the noun ("which of the
interviews", "quines de les entrevistes"): "what do the interviews say" asks no list."""
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def list_noun(question: str) -> str | None:
    """The records' noun of a question that asks for records, as written (``None``: the
    question asks for something else).

    Example:
        >>> list_noun("Quines entrevistes parlen de les famílies que van marxar?")
        'entrevistes'
        >>> list_noun("When was the dam built?") is None
        True
    """
    words: list[str] = _WORD.findall(question)
    folded = [w.lower() for w in words]
    for n, word in enumerate(folded):
        if word not in QUESTION_WORDS:
            continue
        for m in range(n + 1, len(words)):
            if folded[m] in RECORD_NOUNS:
                return folded[m]
            if folded[m] not in FILLERS:
                break
    return None


def is_list_question(question: str) -> bool:
    """Whether ``question`` asks for records (see :func:`list_noun`)."""
    return list_noun(question) is not None


def noun_language(noun: str | None) -> str | None:
    """The language (a Dédalo code) whose noun ``noun`` is, when it is only one's
    ("entrevistes": Catalan; "documents", Catalan and English: ``None``). "Quines entrevistes
    parlen de Chemical Warfare?" is half English by its words; its noun says it is Catalan."""
    if noun is None:
        return None
    langs = [lang for lang, nouns in NOUNS_BY_LANGUAGE.items() if noun.lower() in nouns]
    return langs[0] if len(langs) == 1 else None
