"""A folder archive's lexemes are the server's: the demo's chunks, stemmed by PyStemmer in
Python and by PostgreSQL's text-search configurations, give the same lexemes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from app.core.archive import open_archive
from app.core.archive.lexemes import (
    SPACE_LIKE,
    STOP_MARK,
    WORD_SEPARATORS,
    chunk_lexemes,
    fold_accents,
)
from app.core.archive.postgres.connect import connect
from app.core.archive.postgres.schema import FOLD_FIRST, fold_sql, sql_literal

DIFFERENT_UP_TO = 0.0025
"""The share of words whose lexeme may differ: Snowball versions (PostgreSQL 18 stems
``university`` as ``univers`` and keeps ``emigracion``, PyStemmer 3.1 gives ``universiti`` and
``emigr``: 10 of the demo's 3,963 distinct words), and a server in the C locale, which does not
lower-case a Greek capital (measured: 31 of the demo's 17,204 words, 0.18%)."""


def test_the_demo_chunks_have_the_same_lexemes_on_both_engines(
    indexed_demo_dir: Path, demo_on_postgres: str
) -> None:
    archive = open_archive(indexed_demo_dir, read_only=True)
    try:
        with archive.db.reading() as conn:
            rows = conn.execute("SELECT id, lang, label, text FROM index_chunks").fetchall()
    finally:
        archive.close()
    ours = {
        int(r["id"]): Counter(
            lexeme
            for part in (r["label"], r["text"])
            for lexeme in chunk_lexemes(part, r["lang"]).split()
            if lexeme != STOP_MARK
        )
        for r in rows
    }
    with connect(demo_on_postgres) as conn:
        found = conn.execute(
            "SELECT c.id, x.lexeme, cardinality(x.positions) FROM index_chunks c, "
            "unnest(c.lexical) x"
        ).fetchall()
    theirs: dict[int, Counter[str]] = {}
    for chunk_id, lexeme, count in found:
        theirs.setdefault(int(str(chunk_id)), Counter())[str(lexeme)] = int(str(count))
    assert set(theirs) <= set(ours) and len(ours) == len(rows) > 1000
    words = sum(sum(c.values()) for c in ours.values())
    differing = sum(sum((ours[i] - theirs.get(i, Counter())).values()) for i in ours)
    print(f"\n{len(rows)} chunks, {words} words, {differing} lexemes differ")
    assert differing <= DIFFERENT_UP_TO * words
    same = sum(ours[i] == theirs.get(i, Counter()) for i in ours)
    assert same >= 0.97 * len(ours)


def test_the_server_folds_every_character_as_the_lexemes_do(pg_database: str) -> None:
    """The lexical column's ``translate`` (its table led by the ASCII characters mapped to
    themselves) gives each character what Python's fold gives it: accents off, separators and
    punctuation beyond ASCII spaces, everything else as it is."""
    open_archive(pg_database, create=True).close()
    chars = "".join(chr(code) for code in range(1, 0x300)) + SPACE_LIKE + "αΩжЖ中文😀ḍẞ"
    spaces = str.maketrans({c: " " for c in WORD_SEPARATORS + SPACE_LIKE})
    expected = fold_accents(chars).translate(spaces)
    with connect(pg_database) as conn:
        row = conn.execute(f"SELECT {fold_sql(sql_literal(chars))}".encode()).fetchone()
        columns = conn.execute(
            "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a "
            "ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
            "WHERE d.adrelid = 'index_chunks'::regclass AND a.attname = 'lexical'"
        ).fetchone()
    assert row is not None and row[0] == expected
    assert columns is not None and str(columns[0]).count("translate(") == 2  # label and text
    assert FOLD_FIRST[:20] in str(columns[0])  # the column's table is led by FOLD_FIRST
