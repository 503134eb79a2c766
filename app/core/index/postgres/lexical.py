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
chunk, its document frequency a GIN count, a chunk's length its number of lexemes (``ts_rank``
instead measured 0.0073 nDCG@10 away from SQLite's hybrid on DBpedia, ``docs/shared-archive.md``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from app.core.archive.postgres.connect import Conn
from app.core.archive.postgres.schema import SIMPLE_CONFIG, TEXT_CONFIGS, fold_accents
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
    words = [fold_accents(w) for w in terms(query, lang)]
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
    """The whole index's :class:`Corpus` (one pass over the lexical column)."""
    row = conn.execute(
        "SELECT count(*), coalesce(avg(length(lexical)), 0)::float8 FROM index_chunks"
    )
    found = row.fetchone()
    return Corpus(as_int(found[0]), as_float(found[1])) if found else Corpus(0, 0.0)


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
    "h AS (SELECT m.id, t.i, t.idf, length(m.lexical) AS dl, "
    f"sum({LABEL_WEIGHT} * cardinality(array_positions(x.weights, 'A'::text)) "
    "+ cardinality(array_positions(x.weights, 'B'::text)))::float8 AS f "
    "FROM m CROSS JOIN LATERAL unnest(m.lexical) x JOIN t ON CASE WHEN t.prefix "
    "THEN starts_with(x.lexeme, t.word) ELSE x.lexeme = ANY(t.lexemes) END "
    "GROUP BY m.id, t.i, t.idf, m.lexical)"
)
"""Each matched chunk's weighted hits of each term (label hits count twice) and its length."""
