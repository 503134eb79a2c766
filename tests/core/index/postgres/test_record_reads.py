"""What the record search reads of a shared archive: a label holding every word of the query,
accents folded either way, by a ``translate`` table led by the ASCII characters."""

from __future__ import annotations

from app.core.archive.lexemes import SPACE_LIKE, fold_accents
from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import connect
from app.core.archive.postgres.schema import sql_literal
from app.core.index.hits import SearchFilter
from app.core.index.postgres.record_reads import LABEL_FOLD, PgRecordReads

RESERVOIR = RecordKey("oh1", 2)
"""The demo's "El pantà es va menjar el poble"."""


def test_the_label_fold_is_python_s_for_every_character(demo_url: str) -> None:
    chars = "".join(chr(code) for code in range(1, 0x300)) + SPACE_LIKE + "αΩжЖ中文😀ḍẞ"
    table, mapped = (sql_literal(text) for text in LABEL_FOLD)
    with connect(demo_url) as conn:
        row = conn.execute(f"SELECT translate({sql_literal(chars)}, {table}, {mapped})".encode())
        found = row.fetchone()
    assert found is not None and found[0] == fold_accents(chars)


def test_a_label_is_found_with_or_without_its_accents(demo_url: str) -> None:
    with connect(demo_url) as conn:
        reads = PgRecordReads(conn)
        for query in ("pantà poble", "PANTA POBLE", "panta poblé"):
            assert RESERVOIR in reads.label_candidates(query, SearchFilter()), query
        assert RESERVOIR not in reads.label_candidates("pantans poble", SearchFilter())
