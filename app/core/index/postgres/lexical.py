"""Full-text search over the chunks' ``lexical`` column (``tsvector``, GIN index), ranked by
BM25 as SQLite's FTS5 ranks.

The column (:func:`app.core.archive.postgres.schema.lexical_sql`) holds each chunk's
accent-folded label (weight ``A``) and text (weight ``B``) in its language's configuration:
``catalan``, ``spanish`` or ``english`` (stemmed), ``simple`` for the others. A query keeps the
words SQLite's search keeps (:func:`app.core.index.lexical.terms`: lower-cased, function words
dropped), folded the same way; each word is parsed by all four configurations, so it meets a
chunk in whichever language the chunk was indexed, and any word may match (``OR``, as on
SQLite). For a query of a known language other than English a long word also matches any
lexeme sharing its first letters (``desallo:*``), as the SQLite search's truncation stems do.
Chunks are ranked by FTS5's BM25 (k1 1.2, b 0.75, the label's hits twice the text's),
computed from the ``tsvector``'s positions: a term's frequency is its lexemes' positions in the
chunk, its document frequency a GIN count, a chunk's length its number of words as FTS5 counts
them (the last position of the ``tsvector``: function words keep their positions though they
have no lexeme), so that a short Catalan passage and a label-only chunk weigh as on SQLite
(``ts_rank`` instead measured 0.0073 nDCG@10 away from SQLite's hybrid on DBpedia,
``docs/shared-archive.md``; counting distinct lexemes instead put an English label chunk above
the Catalan passage a Catalan query asked for). The mean length is measured over every chunk up
to :data:`EXACT_MEAN_UP_TO` of them, over a fixed sample of the table's pages above.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from app.core.archive.postgres.connect import Conn
from app.core.archive.postgres.schema import SIMPLE_CONFIG, TEXT_CONFIGS, fold_words
from app.core.index.hits import SearchFilter
from app.core.index.lexical import EXACT_LANGUAGES, stem, terms
from app.core.index.postgres.filters import clause
from app.core.index.postgres.values import as_float, as_int

CONFIGS = (*TEXT_CONFIGS.values(), SIMPLE_CONFIG)
LABEL_WEIGHT = 2
"""A label hit counts twice a text hit (SQLite's BM25 columns: label 2, text 1)."""
K1 = 1.2
B = 0.75
"""BM25's parameters, those of SQLite's FTS5 ``bm25()``."""
_PLAIN = re.compile(r"[^\W_]+")
EXACT_MEAN_UP_TO = 10_000
"""Chunks up to which the mean chunk length is measured on every chunk (measured: 2.1 s for
150,000 chunks of 80 words; a sample of the table's pages gives it within a fraction of a
percent above)."""
_LENGTH = "(SELECT coalesce(max(p), 0) FROM unnest({v}) y, unnest(y.positions) p)"
"""A ``tsvector``'s length in words: its last position (the label's words, then the text's)."""


@dataclass(frozen=True)
class Term:
    """One BM25 term of a query: a word (matching the lexemes it gives in any configuration)
    or a truncation stem (matching the lexemes that start with it)."""

    text: str
    prefix: bool = False

    def tsquery(self) -> tuple[str, list[object]]:
        """The ``tsquery`` SQL of the chunks holding this term, and its arguments."""
        if self.prefix:
            return "to_tsquery('simple', %s)", [self.text + ":*"]
        parts = " || ".join("plainto_tsquery(%s::regconfig, %s)" for _ in CONFIGS)
        return f"({parts})", [a for config in CONFIGS for a in (config, self.text)]


def query_terms(query: str, lang: str | None) -> list[Term]:
    """The terms SQLite's search makes of ``query`` (:func:`app.core.index.lexical.terms`,
    with stems for a known language other than English), accent-folded."""
    words = [w for word in terms(query, lang) for w in fold_words(word).split()]
    found = [Term(w) for w in words]
    if lang is not None and lang not in EXACT_LANGUAGES:
        found += [Term(s, True) for w in words if (s := stem(w)) and _PLAIN.fullmatch(s)]
    return found


@dataclass(frozen=True)
class Corpus:
    """The chunk count and mean chunk length (lexemes) BM25 weighs terms and lengths by."""

    chunks: int
    mean_length: float


def corpus(conn: Conn) -> Corpus:
    """The whole index's :class:`Corpus` (the mean length over a sample of a large table)."""
    row = conn.execute("SELECT count(*) FROM index_chunks").fetchone()
    chunks = as_int(row[0]) if row else 0
    if not chunks:
        return Corpus(0, 0.0)
    length = _LENGTH.format(v="lexical")
    if chunks > EXACT_MEAN_UP_TO:
        share = 100.0 * EXACT_MEAN_UP_TO / chunks
        sample = f" TABLESAMPLE SYSTEM ({share:.6f}) REPEATABLE (0)"
        found = conn.execute(f"SELECT avg({length})::float8 FROM index_chunks{sample}").fetchone()
        if found is not None and found[0] is not None:
            return Corpus(chunks, as_float(found[0]))
    found = conn.execute(f"SELECT coalesce(avg({length}), 0)::float8 FROM index_chunks").fetchone()
    return Corpus(chunks, as_float(found[0]) if found else 0.0)


def idf(conn: Conn, term: Term, size: Corpus) -> float:
    """FTS5's inverse document frequency of ``term`` (``1e-6`` for a term in most chunks)."""
    expression, args = term.tsquery()
    row = conn.execute(
        f"SELECT count(*) FROM index_chunks WHERE lexical @@ {expression}", args
    ).fetchone()
    held = as_int(row[0]) if row else 0
    value = math.log((size.chunks - held + 0.5) / (held + 0.5))
    return value if value > 0 else 1e-6


def search(
    conn: Conn,
    query: str,
    k: int,
    filter: SearchFilter | None = None,
    lang: str | None = None,
    size: Corpus | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk_id, bm25)`` for ``query`` (higher is better): FTS5's BM25 over
    the ``tsvector``'s lexemes (a label hit weighing :data:`LABEL_WEIGHT`; a chunk's length
    is its number of lexemes), any term matching, inside ``filter``.

    Args:
        size: the index's :class:`Corpus` (default: measured now).
    """
    found = query_terms(query, lang)
    if not found:
        return []
    size = size or corpus(conn)
    parts = [term.tsquery() for term in found]
    where, where_args = clause(filter)
    columns = (
        list(range(len(found))),
        [t.text for t in found],
        [t.prefix for t in found],
        [idf(conn, t, size) for t in found],
    )
    rows = conn.execute(
        f"{_TERMS}, m AS (SELECT c.id, c.lexical FROM index_chunks c "
        f"WHERE c.lexical @@ ({' || '.join(p for p, _ in parts)}){where}), {_HITS} "
        f"SELECT id, sum(idf * f * {K1 + 1} / (f + {K1} * (1 - {B} + {B} * dl / %s))) AS score "
        "FROM h GROUP BY id ORDER BY score DESC, id LIMIT %s",
        [*columns, *(a for _, args in parts for a in args), *where_args,
         max(size.mean_length, 1.0), k],
    ).fetchall()  # fmt: skip
    return [(as_int(r[0]), as_float(r[1])) for r in rows]


_LEXEMES = " || ".join(f"to_tsvector('{config}', t.word)" for config in CONFIGS)
_TERMS = (
    "WITH t AS (SELECT t.i, t.prefix, t.idf, t.word, "
    f"(SELECT array_agg(DISTINCT x.lexeme) FROM unnest({_LEXEMES}) x) AS lexemes "
    "FROM unnest(%s::int[], %s::text[], %s::bool[], %s::float8[]) AS t(i, word, prefix, idf))"
)
"""Each term with its lexemes in every configuration."""
_HITS = (
    f"h AS (SELECT m.id, t.i, t.idf, {_LENGTH.format(v='m.lexical')} AS dl, "
    f"sum({LABEL_WEIGHT} * cardinality(array_positions(x.weights, 'A'::text)) "
    "+ cardinality(array_positions(x.weights, 'B'::text)))::float8 AS f "
    "FROM m CROSS JOIN LATERAL unnest(m.lexical) x JOIN t ON CASE WHEN t.prefix "
    "THEN starts_with(x.lexeme, t.word) ELSE x.lexeme = ANY(t.lexemes) END "
    "GROUP BY m.id, t.i, t.idf, m.lexical)"
)
"""Each matched chunk's weighted hits of each term (label hits count twice) and its length."""
