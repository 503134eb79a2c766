"""Letter-trigram matching of a query against record names."""

from __future__ import annotations

from app.core.archive import RecordKey
from app.core.index import names
from app.core.index.storage import ChunkRow


def _row(cid: int, label: str) -> ChunkRow:
    return ChunkRow(cid, RecordKey("nm1", cid), "nm2", "lg-eng", label, "text", None, None)


def test_folding_drops_accents_case_and_punctuation() -> None:
    assert names.fold("Abu-l-Qàssim  Unujur") == "abu l qassim unujur"


def test_a_translated_name_resembles_the_original() -> None:
    coruna = names.trigrams("A Coruña")
    assert names.similarity(names.trigrams("La Corunya"), coruna) > names.NAME_FLOOR
    assert names.similarity(names.trigrams("Bàssora"), coruna) < names.NAME_FLOOR
    assert names.similarity(coruna, coruna) == 1.0
    assert names.similarity(frozenset(), coruna) == 0.0


def test_the_record_named_like_the_query_moves_up() -> None:
    rows = {1: _row(1, "Acerrae"), 2: _row(2, "Aegina"), 3: _row(3, "Agrigentum")}
    ranked = [(2, 0.6), (1, 0.5), (3, 0.45)]
    assert names.boost(ranked, rows, "Agrigent")[0][0] == 3
    assert names.boost(ranked, rows, "Acerra")[0][0] == 1


def test_a_question_leaves_the_ranking_alone() -> None:
    rows = {1: _row(1, "Acerrae"), 2: _row(2, "Aegina")}
    ranked = [(2, 0.9), (1, 0.5)]
    assert names.boost(ranked, rows, "which hoards hold coins struck at Acerrae?") == ranked
