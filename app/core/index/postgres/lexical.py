"""Full-text search over the chunks' ``lexical`` column (``tsvector``, GIN index), ranked by
BM25 as SQLite's FTS5 ranks its lexemes.

The column (:func:`app.core.archive.postgres.schema.lexical_sql`) holds each chunk's
accent-folded label (weight ``A``) and text (weight ``B``) in its language's configuration:
``catalan``, ``spanish`` or ``english`` (stemmed), ``simple`` for the others; a folder
archive's FTS5 table holds the same lexemes (:mod:`app.core.archive.lexemes`). A query keeps
the words SQLite's search keeps (:func:`app.core.index.lexical.query_words`: lower-cased,
function words dropped, folded); the server parses each word in the configurations of
:func:`app.core.archive.lexemes.query_configs` (the query's language and English; all three
stemmed ones when it is not known) and ``simple``, and each distinct lexeme they
give is one BM25 term, matched exactly, as each is one FTS5 phrase on SQLite. For a query of a
known language other than English a long word also matches any lexeme sharing its first
letters (``desall:*``), as SQLite's truncation stems do.
Chunks are ranked by FTS5's BM25 (k1 1.2, b 0.75, the label's hits twice the text's),
computed from the ``tsvector``'s positions: a term's frequency is its lexeme's positions in the
chunk, its document frequency a GIN count, a chunk's length its number of words as FTS5 counts
them (the last position of the ``tsvector``: stop words keep their positions though they have
no lexeme, as they keep a place in SQLite's table), so that a short Catalan passage and a
label-only chunk weigh as on SQLite (``ts_rank`` instead measured 0.0073 nDCG@10 away from
SQLite's hybrid on DBpedia, ``docs/shared-archive.md``). The mean length is measured over every
chunk up to :data:`EXACT_MEAN_UP_TO` of them, over a fixed sample of the table's pages above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.archive.lexemes import query_configs
from app.core.archive.postgres.connect import Conn
from app.core.archive.postgres.schema import SIMPLE_CONFIG, TEXT_CONFIGS
from app.core.index.hits import SearchFilter
from app.core.index.lexical import query_prefixes, query_words
from app.core.index.postgres.filters import clause
from app.core.index.postgres.values import as_float, as_int

CONFIGS = (*TEXT_CONFIGS.values(), SIMPLE_CONFIG)
LABEL_WEIGHT = 2
"""A label hit counts twice a text hit (SQLite's BM25 columns: label 2, text 1)."""
K1 = 1.2
B = 0.75
"""BM25's parameters, those of SQLite's FTS5 ``bm25()``."""
EXACT_MEAN_UP_TO = 10_000
"""Chunks up to which the mean chunk length is measured on every chunk (measured: 2.1 s for
150,000 chunks of 80 words; a sample of the table's pages gives it within a fraction of a
percent above)."""
_LENGTH = "(SELECT coalesce(max(p), 0) FROM unnest({v}) y, unnest(y.positions) p)"
"""A ``tsvector``'s length in words: its last position (the label's words, then the text's)."""


@dataclass(frozen=True)
class Term:
    """One BM25 term of a query: a lexeme (matched exactly) or a truncation stem (matching the
    lexemes that start with it)."""

    text: str
    prefix: bool = False

    def tsquery(self) -> tuple[str, list[object]]:
        """The ``tsquery`` SQL of the chunks holding this term, and its arguments."""
        if self.prefix:
            return "to_tsquery('simple', %s)", [self.text + ":*"]
        return "%s::tsquery", ["'" + self.text.replace("\\", "\\\\").replace("'", "''") + "'"]


def word_tsquery(word: str) -> tuple[str, list[object]]:
    """The ``tsquery`` SQL of the chunks holding any lexeme of ``word`` (in any configuration),
    and its arguments."""
    parts = " || ".join("plainto_tsquery(%s::regconfig, %s)" for _ in CONFIGS)
    return f"({parts})", [a for config in CONFIGS for a in (config, word)]


def query_terms(conn: Conn, query: str, lang: str | None) -> list[Term]:
    """The BM25 terms of ``query``: the distinct lexemes the server makes of its words
    (:func:`app.core.index.lexical.query_words`) in the configurations of
    :func:`~app.core.archive.lexemes.query_configs` and ``simple``, then the truncation stems
    SQLite's search asks for (:func:`app.core.index.lexical.query_prefixes`)."""
    words = query_words(query, lang)
    if not words:
        return []
    configs = (*query_configs(lang), SIMPLE_CONFIG)
    made = " || ".join("to_tsvector(%s::regconfig, w.word)" for _ in configs)
    rows = conn.execute(
        f"SELECT DISTINCT x.lexeme FROM unnest(%s::text[]) AS w(word), unnest({made}) x "
        "ORDER BY x.lexeme",
        [words, *configs],
    ).fetchall()
    found = [Term(str(r[0])) for r in rows]
    return found + [Term(p, True) for p in query_prefixes(words, lang)]


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


def idfs(conn: Conn, terms: list[Term], size: Corpus) -> list[float]:
    """FTS5's inverse document frequency of each term (``1e-6`` for a term in most chunks),
    the chunks holding each counted in one statement."""
    parts = [term.tsquery() for term in terms]
    counts = ", ".join(f"count(*) FILTER (WHERE lexical @@ {sql})" for sql, _ in parts)
    row = conn.execute(
        f"SELECT {counts} FROM index_chunks WHERE lexical @@ ({' || '.join(s for s, _ in parts)})",
        [*(a for _, args in parts for a in args), *(a for _, args in parts for a in args)],
    ).fetchone()
    found = []
    for held in (as_int(v) for v in (row or [0] * len(parts))):
        value = math.log((size.chunks - held + 0.5) / (held + 0.5))
        found.append(value if value > 0 else 1e-6)
    return found


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
    found = query_terms(conn, query, lang)
    if not found:
        return []
    size = size or corpus(conn)
    parts = [term.tsquery() for term in found]
    where, where_args = clause(filter)
    columns = (
        list(range(len(found))),
        [t.text for t in found],
        [t.prefix for t in found],
        idfs(conn, found, size),
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


_TERMS = (
    "WITH t AS (SELECT * FROM unnest(%s::int[], %s::text[], %s::bool[], %s::float8[]) "
    "AS t(i, word, prefix, idf))"
)
"""Each term with its inverse document frequency."""
_HITS = (
    f"h AS (SELECT m.id, t.i, t.idf, {_LENGTH.format(v='m.lexical')} AS dl, "
    f"sum({LABEL_WEIGHT} * cardinality(array_positions(x.weights, 'A'::text)) "
    "+ cardinality(array_positions(x.weights, 'B'::text)))::float8 AS f "
    "FROM m CROSS JOIN LATERAL unnest(m.lexical) x JOIN t ON CASE WHEN t.prefix "
    "THEN starts_with(x.lexeme, t.word) ELSE x.lexeme = t.word END "
    "GROUP BY m.id, t.i, t.idf, m.lexical)"
)
"""Each matched chunk's weighted hits of each term (label hits count twice) and its length."""
