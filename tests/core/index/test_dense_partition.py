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
    monkeypatch.setattr(dense, "PROBE_SHARE", 0.2)


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
    spans = matrix._packed.spans(data[0])
    stored = np.concatenate([matrix._packed.order[a:b] for a, b in spans])
    assert 0 < len(stored) < len(data) // 2
    assert 0 in stored.tolist()  # the query's own row sits in a probed list


def test_rows_are_stored_grouped_by_list_and_mapped_back(small_partition: None) -> None:
    data = clustered(6000)
    matrix = packed(data)
    store = matrix._packed
    assert store is not None and store.grouped == len(data)
    assert (np.diff(store.lists.astype(np.int64)) >= 0).all()  # every list is one slice
    assert sorted(store.order.tolist()) == list(range(len(data)))
    rows = store.order[:50]
    assert (store.codes[:50] == store._quantise(data[rows])).all()  # codes follow their row
    for i in range(16):
        a, b = store.starts[i], store.starts[i + 1]
        assert (store.lists[a:b] == i).all()


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


def restricted_matrix(data: np.ndarray) -> DenseMatrix:
    """Every third row belongs to a restricted record of section "r"; the rest are open."""
    matrix = DenseMatrix(data.shape[1], compressed=True)
    n = len(data)
    sections = ["r" if i % 3 == 0 else "s" for i in range(n)]
    flags: list[bool | None] = [True if i % 3 == 0 else None for i in range(n)]
    matrix.add(list(range(n)), data, sections, flags)
    matrix.exact_lookup = lambda wanted: {i: data[i] for i in wanted}
    assert len(matrix) == n  # consolidated: the compressed rows are built
    return matrix


def test_the_egress_filter_never_lets_a_restricted_row_through(small_partition: None) -> None:
    data = clustered(6000)
    matrix = restricted_matrix(data)
    allowed = matrix.mask(restricted_sections={matrix.section_code("r")})
    open_rows = np.flatnonzero(allowed)
    assert len(open_rows) == 4000  # wider than the shortlist: the partition is probed
    found = 0
    for query in data[:30:3]:  # restricted rows themselves: their own row is the best match
        hits = matrix.search(query, 10, allowed)
        assert hits and all(cid % 3 != 0 for cid, _ in hits)
        found += len(exact_top(data, query, 10, open_rows) & {cid for cid, _ in hits})
    assert found / 100 >= 0.95


def test_a_filter_thin_in_the_probed_lists_falls_back_to_every_allowed_row(
    small_partition: None,
) -> None:
    data = clustered(6000)
    matrix = packed(data)
    store = matrix._packed
    assert store is not None
    query = data[5]
    probed = np.concatenate([store.order[a:b] for a, b in store.spans(query)])
    allowed = np.ones(len(data), bool)
    allowed[probed] = False  # nothing allowed where the query's lists are
    nearest = probed[np.argsort(-(data[probed] @ query))[:3]]
    allowed[nearest] = True  # three rows left there: fewer than the shortlist wants
    hits = matrix.search(query, 10, allowed)
    assert len(hits) == 10 and all(allowed[cid] for cid, _ in hits)
    assert [cid for cid, _ in hits[:3]] == nearest.tolist()  # the rest come from other lists


def test_removals_and_additions_after_grouping_keep_ids_right(small_partition: None) -> None:
    data = clustered(7000, seed=4)
    matrix = packed(data[:6000])
    lookup = dict(enumerate(data))
    matrix.exact_lookup = lambda wanted: {i: lookup[i] for i in wanted}
    matrix.remove(list(range(0, 6000, 2)))  # half gone: compacted on the next consolidation
    matrix.add(list(range(6000, 6060)), data[6000:6060], ["s"] * 60, [None] * 60)
    store = matrix._packed
    assert store is not None and len(matrix) == 3060
    assert len(store.codes) == 3060 and store.grouped == 3000  # the new rows wait in the tail
    alive = np.array([i for i in range(6060) if i >= 6000 or i % 2], np.int64)
    for query in (data[6050], data[7], data[6059], data[1001]):
        hits = matrix.search(query, 5)
        assert {cid for cid, _ in hits} == exact_top(data, query, 5, alive)
    matrix.add(list(range(6060, 7000)), data[6060:], ["s"] * 940, [None] * 940)
    assert len(matrix) == 4000 and store.grouped == 4000  # a long tail is grouped again
    hits = matrix.search(data[6500], 5)
    assert hits[0][0] == 6500


def test_the_two_pass_hamming_keeps_the_nearest_rows_and_the_filters(
    small_partition: None,
) -> None:
    data = clustered(6000, dim=256, seed=5)  # 4 words of sign bits: a first pass on 3 of them
    matrix = restricted_matrix(data)
    store = matrix._packed
    assert store is not None and len(store.bits) > dense.FIRST_WORDS
    query = data[9]
    spans = store.spans(query)
    full = store.hamming(query, spans)
    everything = np.ones(len(data), bool)
    picked = store.shortlist(query, everything, len(data), 200)
    size = len(full)
    assert 200 <= len(picked) < max(int(dense.FIRST_KEEP * size), 800) < size  # two passes ran
    stored = np.concatenate([np.arange(a, b) for a, b in spans])
    distance = dict(zip(stored.tolist(), full.tolist(), strict=True))
    assert distance[int(np.flatnonzero(store.order == 9)[0])] == 0  # the query's own row
    first = store.hamming(query, spans, dense.FIRST_WORDS)
    survivors = set(stored[dense._nearest(first, max(int(dense.FIRST_KEEP * size), 800))].tolist())
    cut = max(distance[p] for p in picked.tolist())
    assert set(picked.tolist()) <= survivors  # the nearest survivors on all the words
    assert all(distance[p] > cut for p in survivors - set(picked.tolist()))
    allowed = matrix.mask(restricted_sections={matrix.section_code("r")})
    found = 0
    for q in data[:60:6]:
        hits = matrix.search(q, 10, allowed)
        assert all(cid % 3 != 0 for cid, _ in hits)
        found += len(exact_top(data, q, 10, np.flatnonzero(allowed)) & {c for c, _ in hits})
    assert found / 100 >= 0.95
