"""BM25 over the chunks' FTS5 table of lexemes: accent-folded, stemmed, label-boosted, any-term
queries.

The table holds each chunk's lexemes (:mod:`app.core.archive.lexemes`: stemmed in the chunk's
language, as PostgreSQL's text search makes them, so a shared archive ranks the same). Common
Catalan, Spanish and English function words are dropped from the query; each remaining word
asks for its stem in the query's language (and English; all three stemmed ones when the
language is not known: :func:`~app.core.archive.lexemes.query_configs`) and itself, each
lexeme one quoted FTS5 phrase (no FTS5 syntax reaches SQLite from a person's text). The label
column weighs twice the text column, a cheap BM25F that helps entity-style queries ("Hugh
Downs"). An any-term (OR) query ranked by BM25 already puts chunks matching more words first;
requiring every word first (AND, then OR) measured worse on DBpedia-Entity (nDCG@10 0.339
against 0.349).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from app.core.archive import lexemes
from app.core.archive.language import FUNCTION_WORDS

LABEL_WEIGHT = 2.0
TEXT_WEIGHT = 1.0
STEM_CHARS = 6
EXACT_LANGUAGES = frozenset({"lg-eng"})
"""Languages whose long words are matched exactly (no truncation stems)."""

STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "de",
        "del",
        "dels",
        "des",
        "el",
        "els",
        "en",
        "es",
        "for",
        "from",
        "has",
        "he",
        "her",
        "his",
        "i",
        "in",
        "is",
        "it",
        "its",
        "la",
        "las",
        "les",
        "lo",
        "los",
        "of",
        "on",
        "or",
        "per",
        "pel",
        "que",
        "qu",
        "se",
        "she",
        "that",
        "the",
        "their",
        "this",
        "to",
        "un",
        "una",
        "uns",
        "unes",
        "was",
        "were",
        "which",
        "who",
        "with",
        "y",
        "o",
        "amb",
        "al",
        "als",
        "com",
        "i",
        "què",
        "con",
        "por",
        "para",
        "sus",
        "su",
        "le",
    )
)

_WORD = re.compile(r"\w+", re.UNICODE)
_ELISION = re.compile(r"\b(?:qu|\w)['’](?=\w)|(?<=\w)['’]\w{1,2}\b")
"""An elided word and its apostrophe: one letter (or ``qu``) before it, one or two after."""
_PLAIN = re.compile(r"[^\W_]+")


RECORDS_OF_SECTION = "(c.section_tipo = ? AND c.section_id IN (SELECT value FROM json_each(?)))"
"""Chunks of one section's records, their ids one JSON array: two arguments however many
records (a fonds searched within holds thousands; a pair of arguments per record ran past
SQLite's variable limit and made the planner test every pair)."""


def ids_by_section(records: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    """``section → its record ids`` of ``records``, in the order given."""
    found: dict[str, list[int]] = {}
    for tipo, sid in records:
        found.setdefault(tipo, []).append(int(sid))
    return found


@dataclass(frozen=True)
class SqlFilter:
    """Restrictions on which chunks may match, as SQL over ``index_chunks c``."""

    sections: tuple[str, ...] = ()
    records: tuple[tuple[str, int], ...] = ()
    exclude_restricted: bool = False

    def clause(self) -> tuple[str, list[object]]:
        """The ``AND ...`` SQL and its arguments."""
        sql, args = "", list[object]()
        if self.sections:
            sql += f" AND c.section_tipo IN ({','.join('?' * len(self.sections))})"
            args.extend(self.sections)
        if self.records:
            by_section = ids_by_section(self.records)
            sections = " OR ".join(RECORDS_OF_SECTION for _ in by_section)
            sql += f" AND ({sections})"
            for tipo, ids in by_section.items():
                args.extend((tipo, json.dumps(ids)))
        if self.exclude_restricted:
            sql += (
                " AND COALESCE(c.restricted, (SELECT s.restricted FROM sections s "
                "WHERE s.tipo = c.section_tipo), 1) = 0"
            )
        return sql, args


def terms(query: str, lang: str | None = None) -> list[str]:
    """The query's searchable words: lower-cased, deduplicated, function words dropped.

    With ``lang`` (a Dédalo code), that language's function words are dropped too. So is what
    an apostrophe cuts off (:data:`_ELISION`: Catalan and French ``l'``, ``d'``, ``qu'``,
    Catalan ``'l``, ``'ns``, English ``'s``): alone, ``l`` matched every name with that initial
    ("En quin moment de l'entrevista…" listed "Loomis, Alfred L."). An initial written as one
    (``Charles P. Smyth``) stays.
    """
    drop = STOPWORDS | FUNCTION_WORDS.get(lang or "", frozenset())
    words = [w for w in _WORD.findall(_ELISION.sub(" ", query.lower())) if w not in drop]
    if not words:
        words = _WORD.findall(query.lower())
    return list(dict.fromkeys(words))


def stem(word: str) -> str | None:
    """The truncation stem of a long word (``desallotjats`` → ``desallo``), else ``None``."""
    return word[:STEM_CHARS] if len(word) > STEM_CHARS else None


def query_words(query: str, lang: str | None = None) -> list[str]:
    """The query's :func:`terms` as the lexical search reads words (accents folded, words cut
    at :data:`~app.core.archive.lexemes.WORD_SEPARATORS`), each once."""
    return list(dict.fromkeys(w for word in terms(query, lang) for w in lexemes.words(word)))


def query_prefixes(words: list[str], lang: str | None) -> list[str]:
    """The truncation stems a query of ``lang`` also asks for (each once): for a known language
    other than English, a long word also matches any lexeme sharing its first
    :data:`STEM_CHARS` letters (``desallotjats`` → ``desall*``), so an inflection the stemmer
    leaves apart still meets it."""
    if lang is None or lang in EXACT_LANGUAGES:
        return []
    return list(dict.fromkeys(s for w in words if (s := stem(w)) and _PLAIN.fullmatch(s)))


def any_lexeme(word: str) -> str:
    """An FTS5 expression matching any lexeme of a query word (quoted, joined by ``OR``)."""
    return " OR ".join(_quoted(t) for t in lexemes.query_lexemes(word))


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(words: list[str], prefixes: list[str], lang: str | None = None) -> str:
    """The FTS5 MATCH expression of a query: every lexeme of ``words``
    (:func:`~app.core.archive.lexemes.query_terms`) and every prefix, quoted, joined by
    ``OR``."""
    quoted = [_quoted(t) for t in lexemes.query_terms(words, lang)]
    quoted += [f'"{p}"*' for p in prefixes if '"' not in p]
    return " OR ".join(quoted)


def search(
    conn: sqlite3.Connection,
    query: str,
    k: int,
    where: SqlFilter | None = None,
    lang: str | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk_id, bm25)`` for ``query`` (positive scores, higher is better).

    Args:
        conn: a connection to the archive.
        query: the query text.
        k: how many chunks.
        where: restrictions on the chunks.
        lang: the query's language, when known: its function words are dropped and long
            words also match by truncation stem (:func:`query_prefixes`).
    """
    words = query_words(query, lang)
    if not words:
        return []
    return _run(conn, match_expression(words, query_prefixes(words, lang), lang), k, where)


def _run(
    conn: sqlite3.Connection, expression: str, k: int, where: SqlFilter | None
) -> list[tuple[int, float]]:
    clause, args = (where or SqlFilter()).clause()
    rows = conn.execute(
        f"SELECT c.id, bm25(index_fts, {LABEL_WEIGHT}, {TEXT_WEIGHT}) AS rank "
        "FROM index_fts JOIN index_chunks c ON c.id = index_fts.rowid "
        f"WHERE index_fts MATCH ?{clause} ORDER BY rank LIMIT ?",
        [expression, *args, k],
    ).fetchall()
    return [(int(r[0]), -float(r[1])) for r in rows]
