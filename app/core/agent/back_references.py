"""Whether a question refers back to the previous answer, and what it asks of those records.

"I quina d'aquestes entrevistes és la més antiga?" is about the records the previous answer
cited, not a new search: its *back-reference* ("d'aquestes") scopes it to them, and its
*superlative over a date* ("la més antiga") picks one by its date field. The words are a small
typed table per language (:data:`TABLES`: Catalan, Spanish, English), matched on whole words
(case and apostrophes folded, accents kept):

* a demonstrative or pronoun (``these``, ``aquestes``, ``estas``, ``d'elles``…) is a
  back-reference, unless a relative pronoun follows it ("those who left" is a new question);
* a date superlative (``oldest``, ``la més recent``, ``la más antigua``…) or an ordinal
  (``the first one``, ``la primera``…) refers back only with a back-reference or in an
  elliptic question: at most one word left besides the table's and the language's function
  words ("And the oldest interview?"), so "Which is the oldest interview in the archive?" is
  still a search of the archive.

:func:`back_reference` returns ``None`` for a question that does not refer back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from app.core.archive.language import FUNCTION_WORDS, detect

Pick = Literal["oldest", "newest", "ordinal"]
"""What a follow-up picks among the previous records (none: it is scoped to them)."""


@dataclass(frozen=True)
class BackReferenceWords:
    """One language's words for referring back (each entry a phrase of whole words)."""

    lang: str
    """The Dédalo code of the language (``lg-cat``)."""
    refer: tuple[str, ...]
    """Demonstratives and pronouns that point at the previous answer's records."""
    relatives: tuple[str, ...]
    """Words that, right after a demonstrative, make it a relative clause instead."""
    oldest: tuple[str, ...]
    newest: tuple[str, ...]
    ordinals: tuple[tuple[str, int], ...]
    """``(phrase, position)``: 1 the first, -1 the last."""
    filler: tuple[str, ...]
    """Words of a follow-up beyond the language's function words (interrogatives, verbs)."""


TABLES: tuple[BackReferenceWords, ...] = (
    BackReferenceWords(
        lang="lg-cat",
        refer=("aquestes", "aquests", "aquelles", "aquells", "d elles", "d ells"),
        relatives=("que", "qui", "on"),
        oldest=("més antiga", "més antic", "més antigues", "més antics", "més vella", "més vell"),
        newest=("més recent", "més recents", "més nova", "més nou", "més moderna", "més modern"),
        ordinals=(
            ("primera", 1),
            ("primer", 1),
            ("segona", 2),
            ("segon", 2),
            ("tercera", 3),
            ("tercer", 3),
            ("última", -1),
            ("últim", -1),
            ("darrera", -1),
            ("darrer", -1),
        ),
        filler=("quina", "quin", "quines", "quins", "és", "són", "i", "de", "d", "l", "la"),
    ),
    BackReferenceWords(
        lang="lg-spa",
        refer=("estas", "estos", "esas", "esos", "aquellas", "aquellos", "de ellas", "de ellos"),
        relatives=("que", "quienes", "quien", "donde"),
        oldest=("más antigua", "más antiguo", "más antiguas", "más antiguos", "más vieja"),
        newest=("más reciente", "más recientes", "más nueva", "más nuevo", "más moderna"),
        ordinals=(
            ("primera", 1),
            ("primero", 1),
            ("segunda", 2),
            ("segundo", 2),
            ("tercera", 3),
            ("tercero", 3),
            ("última", -1),
            ("último", -1),
        ),
        filler=("cuál", "cual", "cuáles", "qué", "es", "son", "y", "de", "la", "el"),
    ),
    BackReferenceWords(
        lang="lg-eng",
        refer=("these", "those", "them", "these ones", "those ones", "of these", "of those"),
        relatives=("who", "whom", "that", "which", "where"),
        oldest=("oldest", "earliest", "least recent"),
        newest=("most recent", "newest", "latest"),
        ordinals=(
            ("first one", 1),
            ("second one", 2),
            ("third one", 3),
            ("last one", -1),
        ),
        filler=("which", "what", "is", "was", "and", "the", "one", "of", "it"),
    ),
)


@dataclass(frozen=True)
class BackReference:
    """What a question that refers back asks: its language, and what it picks (if anything)."""

    lang: str
    pick: Pick | None = None
    """``None``: the question is scoped to the previous records, nothing picked by the core."""
    position: int = 1
    """For an ordinal: 1 the first, 2 the second, -1 the last."""


_APOSTROPHES = re.compile(r"['’`´]")
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """``text``'s words, lower case, apostrophes split (``d'aquestes`` → ``d``, ``aquestes``)."""
    return _WORD.findall(_APOSTROPHES.sub(" ", text.lower()))


def _find(tokens: list[str], phrase: str) -> list[int]:
    """Where the words of ``phrase`` occur in a row in ``tokens`` (each start)."""
    target = phrase.split()
    size = len(target)
    return [n for n in range(len(tokens) - size + 1) if tokens[n : n + size] == target]


@dataclass(frozen=True)
class _Match:
    table: BackReferenceWords
    refers: bool
    pick: Pick | None
    position: int
    used: frozenset[int]
    """The token positions the table's phrases took."""

    @property
    def evidence(self) -> int:
        return len(self.used)


def _refers(table: BackReferenceWords, tokens: list[str], used: set[int]) -> bool:
    found = False
    for phrase in table.refer:
        size = len(phrase.split())
        for start in _find(tokens, phrase):
            after = tokens[start + size] if start + size < len(tokens) else ""
            if after in table.relatives:
                continue
            found = True
            used.update(range(start, start + size))
    return found


def _pick(table: BackReferenceWords, tokens: list[str], used: set[int]) -> tuple[Pick | None, int]:
    superlatives: tuple[tuple[Pick, tuple[str, ...]], ...] = (
        ("oldest", table.oldest),
        ("newest", table.newest),
    )
    for pick, phrases in superlatives:
        for phrase in phrases:
            for start in _find(tokens, phrase):
                used.update(range(start, start + len(phrase.split())))
                return pick, 1
    for phrase, position in table.ordinals:
        for start in _find(tokens, phrase):
            used.update(range(start, start + len(phrase.split())))
            return "ordinal", position
    return None, 1


def _match(table: BackReferenceWords, tokens: list[str]) -> _Match:
    used: set[int] = set()
    refers = _refers(table, tokens, used)
    pick, position = _pick(table, tokens, used)
    return _Match(table, refers, pick, position, frozenset(used))


def _elliptic(match: _Match, tokens: list[str]) -> bool:
    """Whether at most one word is left besides the table's phrases and function words."""
    common = FUNCTION_WORDS.get(match.table.lang, frozenset()) | set(match.table.filler)
    left = [t for n, t in enumerate(tokens) if n not in match.used and t not in common]
    return len(left) <= 1


def back_reference(question: str) -> BackReference | None:
    """What ``question`` asks of the previous answer's records (``None``: it does not refer
    back; see the module docstring)."""
    tokens = words(question)
    matches = [m for table in TABLES if (m := _match(table, tokens)).evidence]
    lang = detect(question)  # breaks ties: "la primera" is Catalan and Spanish
    for match in sorted(matches, key=lambda m: (-m.evidence, m.table.lang != lang)):
        if match.refers or (match.pick is not None and _elliptic(match, tokens)):
            return BackReference(match.table.lang, match.pick, match.position)
    return None
