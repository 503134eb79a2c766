"""The compressed mode's coarse partition: probing the nearest lists keeps the exact top hits."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.index import dense
from app.core.index.dense import DenseMatrix


@pytest.fixture
def small_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Partition from 3,000 rows into 16 lists, so a test needs no million rows."""
    monkeypatch.setattr(dense, "PARTITION_ABOVE", 3000)
    monkeypatch.setattr(dense, "LISTS", 16)
    monkeypatch.setattr(dense, "SHORTLIST", 200)
    monkeypatch.setattr(dense, "MIN_PROBES", 2)


def clustered(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    rows = centres[rng.integers(0, 40, n)] + 0.6 * rng.standard_normal((n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def packed(data: np.ndarray, ids: list[int] | None = None) -> DenseMatrix:
    matrix = DenseMatrix(data.shape[1], compressed=True)
    ids = list(range(len(data))) if ids is None else ids
    matrix.add(ids, data, ["s"] * len(data), [None] * len(data))
    lookup = dict(zip(ids, data, strict=True))
    matrix.exact_lookup = lambda wanted: {i: lookup[i] for i in wanted}
    assert len(matrix) == len(data)  # consolidated: the compressed rows are built
    return matrix


def exact_top(data: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray) -> set[int]:
    scores = data[rows] @ query
    return {int(rows[i]) for i in np.argsort(-scores)[:k]}


def test_probing_the_nearest_lists_finds_the_exact_top_ten(small_partition: None) -> None:
    data = clustered(6000)
    matrix = packed(data)
    queries = data[:30] + 0.02 * np.random.default_rng(1).standard_normal((30, 64))
    found = 0
    for query in queries.astype(np.float32):
        truth = exact_top(data, query, 10, np.arange(len(data)))
        found += len(truth & {cid for cid, _ in matrix.search(query, 10)})
    assert matrix._packed is not None and matrix._packed.centroids is not None
    assert len(set(matrix._packed.lists.tolist())) > 8  # the rows are really spread over lists
    assert found / 300 >= 0.98


def test_a_partitioned_search_scans_only_the_probed_lists(small_partition: None) -> None:
    data = clustered(6000)
    matrix = packed(data)
    assert matrix._packed is not None
    rows = matrix._packed.candidates(data[0], np.ones(len(data), bool), 10)
    assert rows is not None and 0 < len(rows) < len(data) // 2
    assert 0 in rows.tolist()  # the query's own row sits in a probed list


def test_filters_hold_and_a_narrow_filter_scans_every_allowed_row(small_partition: None) -> None:
    data = clustered(6000)
    matrix = packed(data)
    allowed = np.zeros(len(data), bool)
    allowed[::50] = True  # 120 rows: fewer than the shortlist, so no list is probed alone
    hits = matrix.search(data[3], 10, allowed)
    assert {cid for cid, _ in hits} == exact_top(data, data[3], 10, np.flatnonzero(allowed))


def test_rows_added_later_join_their_list_and_growth_retrains(small_partition: None) -> None:
    first, later = clustered(3500, seed=2), clustered(4000, seed=3)
    matrix = packed(first)
    matrix.search(first[0], 5)
    assert matrix._packed is not None and matrix._packed.trained_on == 3500
    ids = list(range(3500, 7500))
    matrix.add(ids, later, ["s"] * 4000, [None] * 4000)
    lookup = {**dict(enumerate(first)), **dict(zip(ids, later, strict=True))}
    matrix.exact_lookup = lambda wanted: {i: lookup[i] for i in wanted}
    matrix.remove(list(range(0, 1500)))
    hits = matrix.search(later[7], 5)
    assert hits[0][0] == 3507
    assert matrix._packed.trained_on == 7500  # doubled since trained: trained again
    assert len(matrix._packed.lists) == len(matrix._packed.codes) == len(matrix) + 1500
    assert all(cid >= 1500 for cid, _ in matrix.search(first[2], 10))
