"""A filter mask and the rows it was computed for: a stale mask never returns a row it
should not, and a mask taken with its search inside ``held()`` survives concurrent indexing."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from app.core.errors import IndexError_
from app.core.index.dense import DenseMatrix


def unit_rows(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("compressed", [False, True])
def test_a_mask_taken_before_rows_were_added_is_refused_with_a_code(compressed: bool) -> None:
    matrix = DenseMatrix(16, compressed=compressed)
    data = unit_rows(40)
    matrix.add(list(range(20)), data[:20], ["s"] * 20, [None] * 20)
    allowed = matrix.mask(sections={matrix.section_code("s")})
    matrix.add(list(range(20, 40)), data[20:], ["s"] * 20, [None] * 20)
    with pytest.raises(IndexError_) as caught:
        matrix.search(data[0], 5, allowed)
    assert caught.value.code == "index.stale_filter"


@pytest.mark.parametrize("compressed", [False, True])
def test_a_row_removed_after_the_mask_was_taken_is_not_returned(compressed: bool) -> None:
    matrix = DenseMatrix(16, compressed=compressed)
    data = unit_rows(30)
    matrix.add(list(range(30)), data, ["s"] * 30, [None] * 30)
    matrix.exact_lookup = lambda ids: {i: data[i] for i in ids}
    allowed = matrix.mask(sections={matrix.section_code("s")})
    matrix.remove([7])
    got = [cid for cid, _ in matrix.search(data[7], 5, allowed)]
    assert 7 not in got and len(got) == 5


def test_restricted_rows_stay_out_while_another_thread_indexes() -> None:
    """Searches with the egress mask, each mask and search inside ``held()``, while rows of
    both kinds are added and removed (compaction included) on another thread."""
    matrix = DenseMatrix(16)
    data = unit_rows(6000, seed=1)
    restricted = {matrix.section_code("secret")}
    stop = threading.Event()

    def index() -> None:
        for start in range(0, 6000, 200):
            ids = list(range(start, start + 200))
            matrix.add(ids, data[start : start + 200], ["open", "secret"] * 100, [None] * 200)
            matrix.remove(ids[:150:2])
        stop.set()

    writer = threading.Thread(target=index)
    writer.start()
    leaked, searches = [], 0
    while not stop.is_set() or searches < 20:
        with matrix.held():
            allowed = matrix.mask(restricted_sections=restricted)
            got = matrix.search(data[searches % 6000], 10, allowed)
        leaked += [cid for cid, _ in got if cid % 2 == 1]  # odd ids are the secret rows
        searches += 1
    writer.join()
    assert searches >= 20 and leaked == []
