"""Retrieval metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from app.core.index.metrics import evaluate, mrr_at, ndcg_at, recall_at


def test_ndcg_uses_graded_gains_and_the_ideal_order() -> None:
    judged = {"a": 2, "b": 1, "c": 0}
    assert ndcg_at(["a", "b"], judged) == pytest.approx(1.0)
    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at(["b", "a", "c"], judged) == pytest.approx(dcg / idcg)


def test_recall_and_mrr() -> None:
    judged = {"a": 1, "b": 2, "c": 0}
    assert recall_at(["x", "a"], judged, 100) == 0.5
    assert mrr_at(["c", "x", "b"], judged, 10) == pytest.approx(1 / 3)
    assert mrr_at(["c"], judged, 10) == 0.0


def test_queries_without_judgements_are_not_scored() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {}}
    result = evaluate({"q1": ["a"], "q2": ["b"]}, qrels)
    assert result == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
