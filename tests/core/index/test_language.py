"""Query language detection and the language-aware reranking."""

from __future__ import annotations

import pytest

from app.core.archive import RecordKey
from app.core.index import Index, ranking
from app.core.index.language import detect
from app.core.index.ranking import by_record, prefer_language
from app.core.index.storage import ChunkRow


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("quan l'aigua va cobrir el poble i vam haver de marxar", "lg-cat"),
        ("cuando el agua cubrió el pueblo y tuvimos que irnos", "lg-spa"),
        ("the village drowned under the dam and families moved away", "lg-eng"),
        ("les familles ont quitté leurs maisons pour le barrage", "lg-fra"),
    ],
)
def test_detects_the_language_of_a_sentence(text: str, lang: str) -> None:
    assert detect(text) == lang


@pytest.mark.parametrize("text", ["Hugh Downs", "Los Angeles", "reservoir", ""])
def test_entity_queries_get_no_language(text: str) -> None:
    assert detect(text) is None


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


def test_records_with_several_matching_chunks_rank_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "CHUNK_WEIGHTS", (1.0, 0.5))
    rows = {1: _row(1, 1, "lg-eng"), 2: _row(2, 2, "lg-eng"), 3: _row(3, 2, "lg-eng")}
    grouped = by_record([(1, 1.0), (2, 0.9), (3, 0.8)], rows)
    assert [rows[c].key.section_id for c, _ in grouped] == [2, 1]
    assert grouped[0][0] == 2  # the record's best chunk is its hit


def test_explicit_language_overrides_the_guess(index: Index) -> None:
    catalan = index.search("the festa major", k=2, mode="lexical", lang="lg-cat")
    english = index.search("the festa major", k=2, mode="lexical", lang="lg-nolan")
    assert catalan[0].lang == "lg-cat"
    assert {h.key for h in english} >= {h.key for h in catalan[:1]}
