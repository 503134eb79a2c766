"""Searching: modes, filters, the egress filter, accent folding, compressed mode."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from app.core.archive import Archive, RecordKey, Section
from app.core.errors import IndexError_
from app.core.index import ArchiveIndex, Index, Searcher, SearchFilter, SearchMode
from app.core.index.dense import DenseMatrix
from app.core.index.search import SearchEngine

from .conftest import CountingEmbedder, text

RESTRICTED = {RecordKey("oh1", 3), RecordKey("rs1", 1)}


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_every_mode_finds_the_matching_passage(index: ArchiveIndex, mode: str) -> None:
    hits = index.search("reservoir flooded the village houses", k=3, mode=mode)  # type: ignore[arg-type]
    best = hits[0]
    assert best.key == RecordKey("oh1", 1)
    assert best.timecode == "00:00:01.000" and best.field_tipo == "oh3"
    assert best.label == "Leaving the valley" and "reservoir" in best.snippet
    assert best.lang == "lg-eng"


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_restricted_records_never_appear_in_an_egress_filtered_search(
    index: ArchiveIndex, mode: str
) -> None:
    unfiltered = {h.key for h in index.search("reservoir", k=20, mode=mode)}  # type: ignore[arg-type]
    assert unfiltered >= RESTRICTED
    egress = SearchFilter(exclude_restricted=True)
    filtered = {h.key for h in index.search("reservoir", k=20, mode=mode, filter=egress)}  # type: ignore[arg-type]
    assert filtered and not filtered & RESTRICTED


def test_a_section_made_restricted_is_excluded_at_once(
    index: ArchiveIndex, oral_archive: Archive
) -> None:
    oral_archive.put_section(
        Section("oh1", {"lg-eng": "Interviews"}, restricted=True, label_field="oh2")
    )
    hits = index.search("reservoir", k=20, filter=SearchFilter(exclude_restricted=True))
    assert hits == []


def test_a_record_made_restricted_is_excluded_before_it_is_reindexed(
    index: ArchiveIndex, oral_archive: Archive
) -> None:
    key = RecordKey("oh1", 1)
    oral_archive.db.write(
        lambda c: c.execute(
            "UPDATE records SET restricted = ? WHERE section_id = 1 AND section_tipo = 'oh1'",
            (True,),
        )
    )
    hits = index.search("reservoir village", k=20, filter=SearchFilter(exclude_restricted=True))
    assert key not in {h.key for h in hits}


def test_section_and_record_filters(index: ArchiveIndex) -> None:
    in_rs1 = index.search("reservoir", k=10, filter=SearchFilter(sections=("rs1",)))
    assert {h.key for h in in_rs1} == {RecordKey("rs1", 1)}
    one = SearchFilter(records=(RecordKey("oh1", 2),))
    modes: tuple[SearchMode, ...] = ("dense", "lexical", "hybrid")
    for mode in modes:
        hits = index.search("festa sardanes", k=10, mode=mode, filter=one)
        assert {h.key for h in hits} == {RecordKey("oh1", 2)}


def test_a_record_filter_of_thousands_of_records(index: ArchiveIndex) -> None:
    """Search within a fonds hands the search every record under it: 40,000 keys (beyond
    SQLite's 32,766 variables at two a record), in two sections, most of them not there."""
    many = (*(RecordKey("oh1", n) for n in range(2, 40_002)), RecordKey("rs1", 1))
    everywhere = {h.key for h in index.search("reservoir festa", k=50, mode="lexical")}
    assert RecordKey("oh1", 1) in everywhere and RecordKey("rs1", 1) in everywhere
    modes: tuple[SearchMode, ...] = ("dense", "lexical", "hybrid")
    for mode in modes:
        hits = index.search("reservoir festa", k=50, mode=mode, filter=SearchFilter(records=many))
        keys = {h.key for h in hits}
        assert keys and keys <= set(many) and RecordKey("oh1", 1) not in keys
        if mode == "lexical":
            assert keys == everywhere - {RecordKey("oh1", 1)}


def test_lexical_search_folds_accents(index: ArchiveIndex) -> None:
    for query in ("placa", "PLAÇA", "plaça"):
        hits = index.search(query, mode="lexical")
        assert [h.key for h in hits] == [RecordKey("oh1", 2)]


def test_queries_with_fts_syntax_are_plain_words(index: ArchiveIndex) -> None:
    assert index.search('"reservoir" AND NOT (', mode="lexical")
    assert index.search("   ", mode="lexical") == []


def test_group_by_record_gives_distinct_records(index: ArchiveIndex) -> None:
    hits = index.search("reservoir city village", k=10, group_by_record=True)
    keys = [h.key for h in hits]
    assert len(keys) == len(set(keys)) >= 3


def test_unknown_mode_is_a_coded_error(index: ArchiveIndex) -> None:
    with pytest.raises(IndexError_) as caught:
        index.search("x", mode="fuzzy")  # type: ignore[arg-type]
    assert caught.value.code == "index.bad_mode"


@pytest.mark.sqlite_only("the compressed in-memory matrix is the SQLite index's")
def test_compressed_index_agrees_with_exact(oral_archive: Archive) -> None:
    for i in range(60):
        oral_archive.create_record("oh1", {"oh3": text(f"turn {i} water valley village {i % 7}")})
    exact = Index(oral_archive, CountingEmbedder(), compressed=False)
    exact.index_now()
    packed = Index(oral_archive, CountingEmbedder(), compressed=True)
    for query in ("water valley", "village 3", "reservoir"):
        a = exact.search(query, k=5, mode="dense")
        b = packed.search(query, k=5, mode="dense")
        assert [h.score for h in a] == pytest.approx([h.score for h in b])  # ties may swap ids


def test_dense_matrix_recall_of_the_compressed_mode() -> None:
    rng = np.random.default_rng(7)
    centers = rng.standard_normal((50, 64)).astype(np.float32)
    data = centers[rng.integers(0, 50, 5000)] + 0.6 * rng.standard_normal((5000, 64))
    data = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)
    exact, packed = DenseMatrix(64), DenseMatrix(64, compressed=True)
    for m in (exact, packed):
        m.add(list(range(5000)), data, ["s"] * 5000, [None] * 5000)
    packed.exact_lookup = lambda ids: {i: data[i] for i in ids}
    found = 0
    for q in data[:50] + 0.1 * rng.standard_normal((50, 64)).astype(np.float32):
        truth = {cid for cid, _ in exact.search(q, 10)}
        found += len(truth & {cid for cid, _ in packed.search(q, 10)})
    assert found / 500 >= 0.98


def test_matrix_updates_keep_exact_and_compressed_in_step() -> None:
    rng = np.random.default_rng(3)
    data = rng.standard_normal((3000, 32)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    exact, packed = DenseMatrix(32), DenseMatrix(32, compressed=True)
    packed.exact_lookup = lambda ids: {i: data[i] for i in ids}
    for m in (exact, packed):
        m.add(list(range(2000)), data[:2000], ["s"] * 2000, [None] * 2000)
        m.search(data[0], 5)
        m.remove(list(range(0, 2000, 2)))  # enough removals to force a compaction
        m.add(list(range(2000, 3000)), data[2000:], ["t"] * 1000, [None] * 1000)
    assert len(exact) == len(packed) == 2000
    for q in data[:20]:
        best = exact.search(q, 3)
        assert all(cid % 2 == 1 or cid >= 2000 for cid, _ in best)
        assert [c for c, _ in packed.search(q, 3)] == [c for c, _ in best]
    only_t = exact.mask(sections={exact.section_code("t")})
    assert all(cid >= 2000 for cid, _ in exact.search(data[1], 10, only_t))


def test_index_is_a_searcher(index: ArchiveIndex) -> None:
    searcher: Searcher = index  # the contract the agent's tools code against
    hits = searcher.search("festa", k=1, mode="lexical", filter=None, lang="lg-nolan")
    assert hits[0].to_dict()["section_tipo"] == "oh1"


def test_the_searcher_protocol_takes_what_its_implementations_take() -> None:
    """Regression: the Protocol lacked ``lang=``, which ``Index`` and ``SearchEngine`` take, so
    code typed against it could not pass a language. mypy checks the types where the app uses
    them (``Index.engine`` is typed ``Searcher``; ``Index`` is handed on as one by the API
    context and by the desktop app's ``Services``); this checks the parameters themselves."""

    def parameters(fn: object) -> list[tuple[str, object, object]]:
        signature = inspect.signature(fn)  # type: ignore[arg-type]
        return [(p.name, p.kind, p.default) for p in signature.parameters.values()]

    protocol = parameters(Searcher.search)
    assert ("lang", inspect.Parameter.KEYWORD_ONLY, None) in protocol
    assert parameters(Index.search) == protocol
    assert parameters(SearchEngine.search) == protocol
