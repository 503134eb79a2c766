"""Whether an access statement closes the material it describes (EAD ``accessrestrict``,
Dublin Core ``dc:rights``), in English, French, Spanish and Catalan."""

from __future__ import annotations

import re
from datetime import date

_CLOSED = re.compile(
    r"\bclosed\b|\brestricted\b|\bembargo|\bconfidential\b|\bnot (?:yet )?open\b"
    r"|\bnon[- ]communicables?\b|\bincommunicables?\b|\bnon consultables?\b"
    r"|\bfermée?s?\b|\bréservée?s?\b"
    r"|\bno (?:es )?consultables?\b|\btanca(?:t|ts|da|des)\b|\bcerrad[oa]s?\b|\brestringid[oa]s?\b"
    r"|\brestringit\b|\bconfidencial"
)
_OPENED = re.compile(
    r"\bno (?:access )?restrictions?\b|\bnot restricted\b|\bwithout restrictions?\b"
    r"|\bsin restricci\w*|\bsense restricci\w*|\bnot closed\b"
)
_PARTIAL = re.compile(
    r"\bportions?\b|\bparts? of\b|\bsome\b|\bcertain\w*\b|\bpartie\b|\bexcept|\bexcept\w*"
    r"|\bà l.exception\b|\balgun\w*|\bexcepto\b|\bexcepte\b"
)
_DELAY = re.compile(r"d[ée]lai de (\d{1,3}) ans")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")


def closes_access(text: str, today: date | None = None) -> bool:
    """Whether an ``accessrestrict`` text closes the material it describes.

    Closing words in English, French, Spanish and Catalan ("closed", "restricted", "fermé",
    "non communicable", "réservé", "no consultable", "tancat"…) close it, unless the sentence
    negates them ("no restrictions") or restricts only part of the material ("access to
    portions of the papers is restricted", "à l'exception des articles…": those parts are
    described, and closed, further down). A French legal delay ("communicable au terme d'un
    délai de 50 ans à compter de 1986") closes the material until it has run out (``today``,
    by default the date of the import).

    Example:
        >>> closes_access("Open to all users.")
        False
        >>> closes_access("Access restricted: contact Special Collections.")
        True
    """
    year = (today or date.today()).year
    for sentence in _SENTENCE.split(text.replace("’", "'").lower()):
        delay = _DELAY.search(sentence)
        if delay is not None:
            start = _YEAR.search(sentence, delay.end())
            if start is None or int(start.group(1)) + int(delay.group(1)) > year:
                return True
            continue
        if _PARTIAL.search(sentence):
            continue
        if _CLOSED.search(_OPENED.sub(" ", sentence)):
            return True
    return False
