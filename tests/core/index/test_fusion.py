"""Fusing the dense and lexical rankings with a per-query weight."""

from __future__ import annotations

import pytest

from app.core.index import fusion

FLAT = [(cid, 0.31 - 0.0002 * cid) for cid in range(1, 101)]
"""A model scoring every document alike (IGCH hoard entries): its best is noise."""
PEAKED_LEX = [(50, 12.0), (60, 11.5), *((cid, 2.0 - 0.01 * cid) for cid in range(1, 40))]
"""BM25 with two documents holding the query's rare word (a mint's name) far above the rest."""


def test_gap_is_raw_for_models_and_relative_for_bm25() -> None:
    ranked = [(1, 0.8), (2, 0.5), (3, 0.3)]
    assert fusion.gap(ranked) == pytest.approx(0.5)
    assert fusion.gap([(1, 10.0), (2, 4.0)], relative=True) == pytest.approx(0.6)
    assert fusion.gap([(1, 0.9)]) == 0.0


def test_dense_confidence_ignores_models_weighed_zero() -> None:
    peaked = [(1, 0.9), (2, 0.3)]
    assert fusion.dense_confidence([(FLAT, 0.0), (peaked, 1.0)]) == pytest.approx(0.6)
    assert fusion.dense_confidence([(FLAT, 1.0), (peaked, 1.0)]) < 0.31


def test_a_guessing_model_gives_way_to_a_sure_bm25() -> None:
    flat = fusion.dense_share(fusion.dense_confidence([(FLAT, 1.0)]), PEAKED_LEX)
    sure = fusion.dense_share(0.5, [(1, 10.0), (2, 9.9), (3, 9.8)])
    assert flat < 0.5 < fusion.DENSE_WEIGHT < sure
    assert fusion.dense_share(0.5, []) == 1.0


def test_rare_word_matches_win_over_a_flat_dense_list() -> None:
    """The IGCH failure: the fixed 0.85 dense weight let the flat list order everything."""
    fused = fusion.hybrid([(FLAT, 1.0)], PEAKED_LEX)
    assert [cid for cid, _ in fused[:2]] == [50, 60]
    fixed = fusion.convex(FLAT, PEAKED_LEX, fusion.DENSE_WEIGHT)
    assert [cid for cid, _ in fixed[:2]] != [50, 60]


def test_a_sure_model_keeps_its_best_hit_first() -> None:
    dense = [(7, 0.82), *((cid, 0.40 - 0.001 * cid) for cid in range(10, 110))]
    lexical = [(cid, 5.0 - 0.01 * cid) for cid in range(10, 110)]
    assert fusion.hybrid([(dense, 1.0)], lexical)[0][0] == 7


def test_models_weighed_zero_do_not_vote() -> None:
    use = [(1, 0.9), (2, 0.2), (3, 0.1)]
    minilm = [(3, 0.9), (2, 0.2), (1, 0.1)]
    assert fusion.hybrid([(minilm, 0.0), (use, 1.0)], [])[0][0] == 1
    assert fusion.hybrid([], [(4, 3.0)]) == [(4, 3.0)]


def test_models_that_disagree_give_way_to_bm25() -> None:
    """Both models read the query yet share none of their first ten: they are guessing."""
    minilm = [(cid, 0.8 - 0.004 * cid) for cid in range(1, 101)]
    use = [(cid, 0.8 - 0.004 * (cid - 100)) for cid in range(101, 201)]
    lexical = [(150, 9.0), (160, 8.8), *((cid, 2.0 - 0.01 * cid) for cid in range(1, 50))]
    assert fusion.agreement([minilm, use]) == 0.0
    assert fusion.agreement([minilm, minilm]) == 1.0
    trusting = fusion.hybrid([(minilm, 1.0), (use, 0.0)], lexical)
    doubting = fusion.hybrid([(minilm, 1.0), (use, 0.0)], lexical, agreeing=True)
    assert trusting[0][0] == 1
    assert [cid for cid, _ in doubting[:2]] == [150, 160]


def test_models_that_share_nothing_leave_bm25_s_order_untouched() -> None:
    """No floor on the BM25 share: even a 5 % dense weight reordered BM25's hits on a mint's
    name by the models' reading of the frame "hoards with coins of" (IGCH)."""
    minilm = [(cid, 0.8 - 0.004 * cid) for cid in range(1, 101)]
    use = [(cid, 0.8 - 0.004 * (cid - 100)) for cid in range(101, 201)]
    # the mint's hoards, nearly tied, in the order opposite to MiniLM's, then weaker matches
    lexical = [(cid, 5.0 - 0.0001 * (60 - cid)) for cid in range(59, 0, -1)]
    lexical += [(cid, 1.0) for cid in range(300, 310)]
    fused = fusion.hybrid([(minilm, 1.0), (use, 0.0)], lexical, agreeing=True)
    assert [cid for cid, _ in fused[:59]] == list(range(59, 0, -1))


def test_partial_agreement_counts_less_than_in_proportion() -> None:
    """Half the agreement asked for keeps less than half the confidence."""
    minilm = [(cid, 0.9 - 0.005 * cid) for cid in range(1, 101)]
    use = [(cid, 0.9 - 0.005 * cid) for cid in (1, 2, 3, *range(104, 201))]
    lexical = [(cid, 8.0 - 0.05 * cid) for cid in range(50, 150)]
    assert fusion.agreement([minilm, use]) == pytest.approx(0.3)
    half = [(cid, 0.9 - 0.005 * cid) for cid in (1, *range(102, 201))]
    shared = fusion.agreement([minilm, half])
    assert shared == pytest.approx(0.1)
    confidence = fusion.dense_confidence([(minilm, 1.0)])
    scaled = confidence * (shared / fusion.AGREEMENT) ** fusion.AGREEMENT_POWER
    assert shared < fusion.AGREEMENT
    assert scaled < confidence * shared / fusion.AGREEMENT
    full = fusion.dense_share(confidence, lexical, scale=fusion.AGREEING_DENSE_SCALE)
    low = fusion.dense_share(scaled, lexical, scale=fusion.AGREEING_DENSE_SCALE)
    assert low < full
    assert fusion.dense_share(confidence, lexical, scale=fusion.AGREEING_DENSE_SCALE) > (
        fusion.dense_share(confidence, lexical)
    )


def test_two_shared_chunks_of_ten_keep_the_models_confidence() -> None:
    """Models sharing two of their first ten chunks are not guessing (DBpedia-Entity): their
    dense list weighs as if they agreed on all ten; one shared chunk gives way to BM25."""
    minilm = [(cid, 0.9 - 0.005 * cid) for cid in range(1, 101)]
    two = [(cid, 0.9 - 0.005 * cid) for cid in (1, 2, *range(103, 201))]
    one = [(cid, 0.9 - 0.005 * cid) for cid in (1, *range(102, 201))]
    lexical = [(cid, 8.0 - 0.05 * cid) for cid in range(50, 150)]
    assert fusion.agreement([minilm, two]) == pytest.approx(0.2)
    agreed = fusion.hybrid([(minilm, 1.0), (two, 0.0)], lexical, agreeing=True)
    same = fusion.hybrid([(minilm, 1.0), (minilm, 0.0)], lexical, agreeing=True)
    assert agreed[:20] == same[:20]
    doubted = fusion.hybrid([(minilm, 1.0), (one, 0.0)], lexical, agreeing=True)
    assert doubted[0][0] == 50
    assert agreed[0][0] == 1
