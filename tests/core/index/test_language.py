"""Query language detection and the language-aware reranking."""

from __future__ import annotations

import pytest

from app.core.archive import RecordKey
from app.core.archive.language import NEUTRAL, detect, lean
from app.core.index import Index, ranking
from app.core.index.ranking import by_record, prefer_language
from app.core.index.storage import ChunkRow


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("quan l'aigua va cobrir el poble i vam haver de marxar", "lg-cat"),
        ("cuando el agua cubrió el pueblo y tuvimos que irnos", "lg-spa"),
        ("the village drowned under the dam and families moved away", "lg-eng"),
        ("les familles ont quitté leurs maisons pour le barrage", "lg-fra"),
        # the OHMS set's Catalan question around English names: "en" counts (it did not)
        ("En quin segment parla Charles P. Smyth del Chemical Warfare Service?", "lg-cat"),
        ("En qué año se fundó el sindicato?", "lg-spa"),
    ],
)
def test_detects_the_language_of_a_sentence(text: str, lang: str) -> None:
    assert detect(text) == lang


@pytest.mark.parametrize(
    "text", ["Hugh Downs", "Los Angeles", "reservoir", "", "Jean en Provence", "en route to Paris"]
)
def test_entity_queries_get_no_language(text: str) -> None:
    assert detect(text) is None


def test_an_english_word_in_tion_leans_no_query_to_french() -> None:
    """An ending in "-tion" is English as often as French: alone it is no evidence."""
    assert lean("Valley fever fungal infection San Joaquin") is None
    assert lean("un castell") == "lg-cat"
    assert detect("la révolution et la nation, c'était le peuple") == "lg-fra"


def _row(cid: int, sid: int, lang: str) -> ChunkRow:
    return ChunkRow(cid, RecordKey("oh1", sid), "oh3", lang, "", "text", None, None)


def test_chunks_and_records_of_the_query_language_move_up() -> None:
    rows = {1: _row(1, 1, "lg-eng"), 2: _row(2, 2, "lg-cat"), 3: _row(3, 3, "lg-cat")}
    originals = {
        RecordKey("oh1", 1): frozenset({"lg-eng"}),
        RecordKey("oh1", 3): frozenset({"lg-eng"}),
    }
    ranked = [(1, 1.0), (3, 0.95), (2, 0.9)]
    assert [c for c, _ in prefer_language(ranked, rows, originals, "lg-cat")] == [2, 3, 1]
    assert prefer_language(ranked, rows, originals, None) == ranked


def _passage(cid: int, sid: int, field: str, words: int) -> ChunkRow:
    text = " ".join(["word"] * words)
    return ChunkRow(cid, RecordKey("oh1", sid), field, "lg-eng", "", text, None, None)


def test_records_whose_fields_agree_rank_first() -> None:
    rows = {
        1: _passage(1, 1, "oh25", 60),  # one passage that matches well
        2: _passage(2, 2, "oh25", 60),  # a passage of record 2 ...
        3: _passage(3, 2, "oh23", 60),  # ... and its summary agree
    }
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8)]
    assert by_record(ranked, rows) == [(1, 1.0), (2, 0.9)]  # default: the best chunk alone
    grouped = by_record(ranked, rows, ranking.AGREEMENT_WEIGHTS)
    assert [rows[c].key.section_id for c, _ in grouped] == [2, 1]
    assert grouped[0][0] == 2  # the record's best chunk is its hit


def test_chunks_of_one_field_and_short_identifiers_add_nothing() -> None:
    rows = {
        1: _passage(1, 1, "oh25", 60),
        2: _passage(2, 2, "oh25", 60),
        3: _passage(3, 2, "oh25", 60),  # the same field again: no agreement
        4: ChunkRow(4, RecordKey("oh1", 2), "oh14", NEUTRAL, "", "OH-0002", None, None),  # an id
    }
    grouped = by_record([(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.8)], rows, ranking.AGREEMENT_WEIGHTS)
    assert grouped == [(1, 1.0), (2, 0.9)]


def test_explicit_language_overrides_the_guess(index: Index) -> None:
    catalan = index.search("the festa major", k=2, mode="lexical", lang="lg-cat")
    english = index.search("the festa major", k=2, mode="lexical", lang="lg-nolan")
    assert catalan[0].lang == "lg-cat"
    assert {h.key for h in english} >= {h.key for h in catalan[:1]}


class _Model:
    def __init__(self, languages: tuple[str, ...] | None) -> None:
        self.languages = languages


def test_a_query_of_no_known_language_asks_both_models() -> None:
    minilm, use = _Model(("lg-eng",)), _Model(None)
    models = (minilm, use)
    assert ranking.model_weight("lg-eng", use, models) == ranking.GENERALIST_WEIGHT
    assert ranking.model_weight(None, use, models) == ranking.UNKNOWN_GENERALIST_WEIGHT > 0
    assert ranking.model_weight(None, minilm, models) == 1.0
    assert ranking.model_weight("lg-cat", minilm, models) == ranking.FOREIGN_MODEL_WEIGHT
    assert ranking.model_weight("lg-cat", use, models) == 1.0
