"""The passage a search result shows for its record, with the query's words marked.

A record's best chunk is not always worth reading: an archival unit's best chunk may be its
identifiers (``572AP/14 · cote-de-consultation: 572AP/14 · FRAN_IR_003500 · …``), a mint's its
title again (``Barcino``), a unit's the name of its fonds. So the passage shown is chosen among
the record's matching chunks (and, when none of them will do, among all its chunks), from
those that say something the title does not (:func:`readable`): the one holding most of the
query's words, then one of more than a few words (a description before a one-word type), then
one in the query's or the reader's language, then the search's own order. A record with no
such passage shows its title alone; a query that is itself an identifier (``572AP/14``) keeps
the identifier chunk that holds it.

:func:`marks` gives the spans of the query's words in a passage (accent- and case-folded,
inflections matched by their first :data:`~app.core.index.lexical.STEM_CHARS` letters as the
lexical search matches them), for the results view to highlight and the CLI to bracket.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from app.core.archive.language import NEUTRAL
from app.core.index import lexical, query_frame
from app.core.index.names import fold
from app.core.json_types import JsonObject

WORDY_SHARE = 0.6
"""A text is real text when at least this share of its tokens are words of letters."""
SHORT_WORDS = 8
"""A passage shorter than this (a type, a place name) gives way to a longer one that matches
as many of the query's words."""
MIN_PREFIX = 4
"""A query word this long also marks the longer words it begins (``vall`` → ``valls``)."""

_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"\w+", re.UNICODE)
_LETTERS = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$", re.UNICODE)
_EDGES = "«»“”\"'()[]{}.,;:!?¿¡…"
Span = tuple[int, int]


@dataclass(frozen=True)
class HitPassage:
    """A passage of a record that matched a query.

    ``marks`` are ``(start, end)`` offsets in ``text`` of the query's words.
    """

    text: str
    field_tipo: str
    lang: str
    score: float
    timecode: str | None = None
    page: str | None = None
    marks: tuple[Span, ...] = ()

    def to_dict(self) -> JsonObject:
        """JSON form (CLI ``--json``)."""
        return {
            "text": self.text,
            "field": self.field_tipo,
            "lang": self.lang,
            "score": round(self.score, 6),
            "timecode": self.timecode,
            "page": self.page,
            "marks": [list(span) for span in self.marks],
        }


def query_words(query: str, lang: str | None = None) -> tuple[str, ...]:
    """The folded words of ``query`` worth marking: its topic (the question frame dropped,
    :func:`~app.core.index.query_frame.strip`), without function words."""
    words = lexical.terms(query_frame.strip(query), lang)
    return tuple(dict.fromkeys(f for w in words if (f := fold(w))))


def _matches(token: str, word: str) -> bool:
    if token == word:
        return True
    stem = lexical.stem(word)
    if stem is not None and token.startswith(stem):
        return True
    return len(word) >= MIN_PREFIX and token.startswith(word)


def marks(text: str, words: Sequence[str]) -> tuple[Span, ...]:
    """The spans of ``text`` that are one of the folded query ``words`` (or an inflection)."""
    if not words:
        return ()
    spans: list[Span] = []
    for match in _WORD.finditer(text):
        token = fold(match.group())
        if token and any(_matches(token, word) for word in words):
            spans.append(match.span())
    return tuple(spans)


def is_identifiers(text: str, lang: str = "") -> bool:
    """Whether ``text`` is codes and identifiers rather than words a person reads.

    Language-neutral chunks are (a type, a call number); otherwise fewer than
    :data:`WORDY_SHARE` of its tokens are words of letters (``FRAN_IR_003500``, ``572AP/14``
    and ``nmo:Mint`` are not; ``d'aigua`` and ``Sant-Romà`` are).
    """
    if lang == NEUTRAL:
        return True
    tokens = [t.strip(_EDGES) for t in _TOKEN.findall(text)]
    tokens = [t for t in tokens if t and t not in ("·", "-", "–", "—", "|", "/")]
    if not tokens:
        return True
    words = sum(1 for t in tokens if _LETTERS.match(t))
    return words < WORDY_SHARE * len(tokens)


def query_is_identifier(query: str) -> bool:
    """Whether the query is itself a code (``572AP/14``, ``FRAN_IR_003500``)."""
    return any(not _LETTERS.match(t.strip(_EDGES)) for t in _TOKEN.findall(query.strip()))


def choose(
    passages: Iterable[HitPassage],
    titles: Collection[str],
    query: str,
    words: Sequence[str],
    langs: Collection[str] = (),
) -> list[HitPassage]:
    """The passages worth showing (:func:`readable`), best first; one of each text.

    ``titles`` are the record's titles (every language, and its label with its code). The
    best passage holds most of the query's words, then is more than a few words long, then
    is written in ``langs`` (the query's and the reader's languages: the Spanish summary of
    an interview for a Spanish query, not its Catalan one), then comes first in ``passages``.
    """
    folded_titles = {fold(t) for t in titles}
    title_words = {w for t in folded_titles for w in t.split()}
    code_query = query_is_identifier(query)
    seen: set[str] = set()
    ranked: list[tuple[tuple[int, ...], HitPassage]] = []
    for order, passage in enumerate(passages):
        folded = fold(passage.text)
        if folded in seen or not readable(passage, folded_titles, title_words, code_query):
            continue
        seen.add(folded)
        found = len({fold(passage.text[a:b]) for a, b in passage.marks})
        key = (
            -min(found, len(words)),
            int(len(folded.split()) < SHORT_WORDS),
            int(bool(langs) and passage.lang not in langs),
            order,
        )
        ranked.append((key, passage))
    return [passage for _, passage in sorted(ranked, key=lambda item: item[0])]


def readable(
    passage: HitPassage, titles: Collection[str], title_words: Collection[str], code_query: bool
) -> bool:
    """Whether a passage says something the row's title does not.

    Not identifiers (unless the query is a code the passage holds); not one of the folded
    ``titles``; and either more than a few words long, or marking a query word that the title
    does not hold (the fonds name under each of its units, ``Fonds Vitet``, says nothing
    when the title says ``Vitet`` already).
    """
    found = {fold(passage.text[a:b]) for a, b in passage.marks}
    if is_identifiers(passage.text, passage.lang):
        return code_query and bool(found)
    folded = fold(passage.text)
    if _is_title(folded, titles):
        return False
    return len(folded.split()) >= SHORT_WORDS or bool(found - set(title_words))


def worth_quoting(
    text: str, lang: str, titles: Collection[str], words: Sequence[str], query: str
) -> bool:
    """Whether a hit's ``text`` says something its record's ``titles`` do not, by the rule a
    search row shows a passage by (:func:`readable`): a composed answer quotes no bare code
    (a subject heading's kind, ``subject``) nor a title again."""
    passage = HitPassage(text, "", lang, 0.0, marks=marks(text, words))
    folded = {fold(t) for t in titles}
    title_words = {w for t in folded for w in t.split()}
    return readable(passage, folded, title_words, query_is_identifier(query))


def _is_title(folded: str, titles: Collection[str]) -> bool:
    """Whether a folded passage is one of the folded ``titles`` (or the end of one: the title
    without the reference code it leads with)."""
    return not folded or any(folded == t or t.endswith(" " + folded) for t in titles)
