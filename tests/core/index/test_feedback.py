"""Pseudo-relevance feedback: when it runs, how the query moves, which record stays first."""

from __future__ import annotations

import numpy as np

from app.core.archive.model import RecordKey
from app.core.index import feedback
from app.core.index.storage import ChunkRow


class English:
    languages = ("lg-eng",)


class Everything:
    languages = None


def row(cid: int, sid: int) -> ChunkRow:
    return ChunkRow(cid, RecordKey("oh1", sid), "oh25", "lg-cat", "", "text", None, None)


def test_feedback_runs_only_for_a_language_the_specialist_does_not_read() -> None:
    both = (English(), Everything())
    assert feedback.wanted("lg-cat", both)
    assert not feedback.wanted("lg-eng", both)
    assert not feedback.wanted(None, both)
    assert not feedback.wanted("lg-cat", (English(),))  # no multilingual model


def test_expand_moves_the_query_towards_the_centre_and_keeps_it_unit() -> None:
    query = np.array([1.0, 0.0], np.float32)
    center = np.array([0.0, 1.0], np.float32)
    moved = feedback.expand(query * 3, center, 1.0)
    assert np.allclose(moved, [2**-0.5, 2**-0.5])
    assert np.allclose(feedback.expand(query, center, 0.0), query)


def test_keep_first_puts_the_first_pass_best_record_back_on_top() -> None:
    rows = {1: row(1, 1), 2: row(2, 2), 3: row(3, 3)}
    ranked = [(2, 0.9), (3, 0.8), (1, 0.7)]
    kept = feedback.keep_first(list(ranked), [RecordKey("oh1", 1)], rows)
    assert kept == [(1, 0.9), (2, 0.9), (3, 0.8)]
    assert feedback.keep_first(list(ranked), [RecordKey("oh1", 2)], rows) == ranked


def test_feedback_needs_bm25_to_have_found_one_of_the_first_records() -> None:
    rows = {1: row(1, 1), 2: row(2, 2), 3: row(3, 3)}
    top = [RecordKey("oh1", 1), RecordKey("oh1", 2)]
    assert feedback.corroborated(top, [(3, 9.0), (2, 4.0)], rows)
    assert not feedback.corroborated(top, [(3, 9.0)], rows)
    assert not feedback.corroborated(top, [], rows)  # BM25 found nothing ("un castell")
