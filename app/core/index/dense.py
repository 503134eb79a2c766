"""Exact cosine search over an in-memory matrix, and a compressed mode for ~1M chunks.

Rows are L2-normalised, so cosine is a dot product: ``scores = matrix @ query`` then
``argpartition`` for the top k. Rows carry the chunk id, a section code and the record's own
restriction flag, so filters become boolean masks applied *before* ranking.

The compressed mode keeps no float32 matrix: sign bits (48 bytes a row at 384 dims) pick a
shortlist by Hamming distance, int8 rows (per-dimension scale) re-rank it, and the final few are
rescored exactly from their stored float32 vectors. From :data:`PARTITION_ABOVE` rows a coarse
partition (spherical k-means, :data:`LISTS` lists) limits the Hamming pass to the lists nearest
the query, about :data:`PROBE_SHARE` of the rows: at 1M rows the full pass was the whole cost.
The compressed rows are stored grouped by list, so a probed list is a contiguous slice; filters
stay masks over matrix rows, mapped to the stored order, and only allowed rows are returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.core.errors import IndexError_

Vectors = npt.NDArray[np.float32]
Ids = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
Positions = npt.NDArray[np.int32]
Spans = npt.NDArray[np.int64]
"""``(start, stop)`` rows of stored positions, one slice each."""
Distances = npt.NDArray[np.uint16]
ExactLookup = Callable[[list[int]], dict[int, Vectors]]

NO_FLAG = -1
SHORTLIST = 16_000
"""Rows kept by the Hamming pass in compressed mode (before int8 re-ranking). On Tate's 146,711
real vectors a model with its 46 queries (``bench_index.py real``), partition forced with
:data:`PROBE_SHARE` 0.5, recall@10 against exact was 0.946 → 0.996 (USE) and 0.976 → 0.993
(MiniLM) from 4,000 to 16,000 rows (with 0.2 probed and 4,000 rows before); without the
partition 0.993 / 0.998 with 12,000. The int8 re-ranking of 16,000 rows costs about 3 ms."""
FIRST_WORDS = 3
"""64-bit words of sign bits in the first Hamming pass over many rows (192 of 512 bits)."""
FIRST_KEEP = 0.2
"""Share of the scanned rows the first pass keeps for the full Hamming distance: on the real
vectors above (3 words, 20%) recall@10 0.996 / 0.978 against 0.998 / 0.979 for one pass."""
PARTITION_ABOVE = 200_000
"""Rows from which the compressed mode partitions its rows (below, one pass is cheap)."""
LISTS = 1024
"""Coarse lists of the partition (k-means centroids)."""
PROBE_SHARE = 0.5
"""Share of the rows in the lists probed for a query (nearest centroids first). The benchmark's
1M clustered 512-d rows kept the whole exact top 10 from 0.02, but real embeddings are far less
clustered: on Tate's 146,711 real USE vectors (1,024 lists, the 46 queries) the probed lists
held 0.957 of the exact top 10 at 0.2, 0.980 at 0.3 and 0.989 at 0.4 (docs/search.md). At 1M
rows 0.5 with the 16,000-row shortlist measured p50 9.3 ms (0.2 with 4,000: 4.6 ms)."""
TAIL_SHARE = 1 / 32
"""Rows added since the last grouping (scanned by every query) above which all are regrouped."""
MIN_PROBES = 8
TRAIN_PER_LIST = 40
"""Rows sampled per list to train the centroids."""


@dataclass
class Rows:
    """Per-row metadata used by the filters."""

    ids: Ids
    sections: npt.NDArray[np.int32]
    flags: npt.NDArray[np.int8]


def _empty_rows() -> Rows:
    return Rows(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int8))


class Compressed:
    """Sign bits plus int8 rows of a matrix (about 1/4 of float32 memory).

    The per-dimension int8 scale is fixed by the first rows; rows added later are clipped to
    it (unit vectors of one model rarely exceed it, and only the re-ranking is approximate:
    the final scores are exact).

    With a partition the rows are stored *grouped by list* (``order`` maps a stored position
    to the matrix row it holds): probing a list reads contiguous slices, not gathers. Rows
    added later sit in an ungrouped tail, scanned by every query, and are grouped with the
    rest once the tail exceeds :data:`TAIL_SHARE` of the rows.
    """

    def __init__(self, matrix: Vectors) -> None:
        peak = np.abs(matrix).max(axis=0) if len(matrix) else np.full(matrix.shape[1], 0.25)
        self.scale = (np.maximum(peak, 1e-6) / 127.0).astype(np.float32)
        self.codes = self._quantise(matrix)
        self.bits = self._signs(matrix)
        self.order: Positions = np.arange(len(matrix), dtype=np.int32)
        self.centroids: Vectors | None = None
        self.trained_on = 0
        self.grouped = 0
        self.starts: Ids = np.zeros(1, np.int64)
        if len(matrix) >= PARTITION_ABOVE:
            self._train(matrix)
        self.lists = self._assign(matrix)
        self._regroup()

    def _quantise(self, matrix: Vectors) -> npt.NDArray[np.int8]:
        """int8 codes, in blocks (no float temporaries the size of the whole matrix)."""
        out = np.empty(matrix.shape, np.int8)
        for start in range(0, len(matrix), 65_536):
            block = np.round(matrix[start : start + 65_536] / self.scale)
            out[start : start + len(block)] = np.clip(block, -127, 127)
        return out

    @staticmethod
    def _signs(matrix: Vectors) -> npt.NDArray[np.uint64]:
        packed = np.packbits(matrix > 0, axis=1)
        packed = np.pad(packed, ((0, 0), (0, (-packed.shape[1]) % 8)))
        return np.ascontiguousarray(packed.view(np.uint64).T)

    def _train(self, matrix: Vectors) -> None:
        """Fit the partition's centroids on a sample of ``matrix`` (spherical k-means)."""
        self.centroids = kmeans(matrix, LISTS)
        self.trained_on = len(matrix)

    def _assign(self, matrix: Vectors) -> npt.NDArray[np.int16]:
        """Each row's nearest centroid (all 0 without a partition)."""
        if self.centroids is None:
            return np.zeros(len(matrix), np.int16)
        out = np.empty(len(matrix), np.int16)
        for start in range(0, len(matrix), 65_536):
            block = np.asarray(matrix[start : start + 65_536], np.float32)
            out[start : start + len(block)] = np.argmax(block @ self.centroids.T, axis=1)
        return out

    def _repartition(self) -> None:
        """Train and assign again from the int8 rows (the float rows are gone), in blocks."""
        rng = np.random.default_rng(0)
        take = np.sort(rng.choice(len(self.codes), min(len(self.codes), LISTS * TRAIN_PER_LIST)))
        self._train(self._decoded(self.codes[take]))
        self.trained_on = len(self.codes)
        self.lists = np.concatenate(
            [
                self._assign(self._decoded(self.codes[start : start + 65_536]))
                for start in range(0, len(self.codes), 65_536)
            ]
        )
        self.grouped = 0  # new lists: the old grouping means nothing
        self._regroup()

    def _decoded(self, codes: npt.NDArray[np.int8]) -> Vectors:
        return np.asarray(codes.astype(np.float32) * self.scale, np.float32)

    def _regroup(self) -> None:
        """Store the rows in list order (stable), so that every list is one slice."""
        if self.centroids is None:
            self.grouped = 0
            return
        if self.grouped < len(self.lists):
            by_list = np.argsort(self.lists, kind="stable")
            self.codes = self.codes[by_list]
            self.bits = np.ascontiguousarray(self.bits[:, by_list])
            self.lists = self.lists[by_list]
            self.order = self.order[by_list]
            self.grouped = len(self.lists)
        self._count_lists()

    def _count_lists(self) -> None:
        if self.centroids is not None:
            sizes = np.bincount(self.lists[: self.grouped], minlength=len(self.centroids))
            self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def select(self, keep: Mask) -> None:
        """Drop the rows not in ``keep`` (a mask over matrix rows; the grouping holds)."""
        if keep.all():
            return
        kept = keep[self.order]
        renumber = (np.cumsum(keep) - 1).astype(np.int32)
        self.order = renumber[self.order[kept]]
        self.codes = self.codes[kept]
        self.bits = np.ascontiguousarray(self.bits[:, kept])
        self.lists = self.lists[kept]
        self.grouped = int(np.count_nonzero(kept[: self.grouped]))
        self._count_lists()

    def extend(self, matrix: Vectors) -> None:
        """Append rows (quantised with the existing scale, put in their nearest list).

        The partition is (re)trained, from the int8 rows, once the rows first reach
        :data:`PARTITION_ABOVE` and whenever they have doubled since it was trained."""
        first = len(self.codes)
        self.codes = np.concatenate([self.codes, self._quantise(matrix)])
        self.bits = np.ascontiguousarray(np.concatenate([self.bits, self._signs(matrix)], axis=1))
        self.order = np.concatenate([self.order, np.arange(first, len(self.codes), dtype=np.int32)])
        if len(self.codes) >= PARTITION_ABOVE and len(self.codes) >= 2 * self.trained_on:
            self._repartition()
            return
        self.lists = np.concatenate([self.lists, self._assign(matrix)])
        if len(self.lists) - self.grouped > TAIL_SHARE * len(self.lists):
            self._regroup()

    def spans(self, query: Vectors) -> Spans:
        """Stored ``(start, stop)`` slices to scan for ``query``: the lists of the nearest
        centroids until they hold :data:`PROBE_SHARE` of the rows, and the ungrouped tail
        (all the rows without a partition). Adjacent slices are merged."""
        if self.centroids is None:
            return np.array([[0, len(self.codes)]], np.int64)
        sizes = np.diff(self.starts)
        nearest = np.argsort(-np.einsum("ij,j->i", self.centroids, query))
        reach = np.cumsum(sizes[nearest])
        probes = max(MIN_PROBES, int(np.searchsorted(reach, PROBE_SHARE * self.grouped)) + 1)
        probed = np.sort(nearest[:probes])
        begin = np.append(self.starts[probed], self.grouped)
        end = np.append(self.starts[probed + 1], len(self.codes))
        fresh = np.flatnonzero(np.append(True, begin[1:] != end[:-1]))
        last = np.append(fresh[1:] - 1, len(begin) - 1)
        merged = np.stack([begin[fresh], end[last]], axis=1)
        return merged[merged[:, 1] > merged[:, 0]]

    def hamming(self, query: Vectors, spans: Spans, words: int | None = None) -> Distances:
        """Hamming distance of the sign bits of the rows in ``spans`` (concatenated) to the
        query's, over the first ``words`` 64-bit words (all by default): ``bitwise_count`` of
        the XOR, one word of every row at a time, each span XORed straight from its contiguous
        slice into one buffer (copying the slices first measured 1.4 times slower)."""
        packed = _query_words(query)[:words]
        lengths = spans[:, 1] - spans[:, 0]
        starts = np.cumsum(lengths) - lengths  # where each span goes in the result
        bounds = np.stack([spans[:, 0], spans[:, 1], starts], axis=1).tolist()
        size = int(lengths.sum())
        total = np.zeros(size, np.uint16)
        xor, ones = np.empty(size, np.uint64), np.empty(size, np.uint8)
        for word, qword in zip(self.bits, packed, strict=False):
            for start, stop, at in bounds:
                np.bitwise_xor(word[start:stop], qword, out=xor[at : at + stop - start])
            total += np.bitwise_count(xor, out=ones)
        return total

    def shortlist(self, query: Vectors, allowed: Mask, n_allowed: int, wanted: int) -> Ids:
        """Stored positions of about ``wanted`` allowed rows nearest ``query`` by Hamming
        distance in the probed lists (every allowed row when the lists hold too few).
        Only allowed rows are ever returned (``n_allowed``: how many ``allowed`` has).

        Over many rows a first pass on :data:`FIRST_WORDS` words keeps :data:`FIRST_KEEP` of
        them, and only those are measured on all the words."""
        if n_allowed <= wanted:
            return np.flatnonzero(allowed[self.order])
        spans = self.spans(query)
        ok = None if n_allowed == len(allowed) else allowed[self._positions(spans)]
        if ok is not None and int(np.count_nonzero(ok)) < wanted:
            spans = np.array([[0, len(self.codes)]], np.int64)
            ok = allowed[self.order]
        size = int((spans[:, 1] - spans[:, 0]).sum())
        keep = max(int(FIRST_KEEP * size), 4 * wanted)
        first = FIRST_WORDS if keep < size and len(self.bits) > FIRST_WORDS else None
        distances = self.hamming(query, spans, first)
        if ok is not None:
            distances[~ok] = np.iinfo(np.uint16).max
        picked = _nearest(distances, wanted if first is None else keep)
        if ok is not None:
            picked = picked[ok[picked]]
        stored = _stored(spans, picked)
        if first is None:
            return stored
        rest = distances[picked]
        for word, qword in zip(self.bits[first:], _query_words(query)[first:], strict=True):
            rest += np.bitwise_count(word[stored] ^ qword)
        return stored[_nearest(rest, wanted)]

    def _positions(self, spans: Spans) -> Positions:
        """Matrix rows of the stored positions in ``spans``, concatenated."""
        return np.concatenate([self.order[a:b] for a, b in spans])

    def rescore(self, positions: Ids, query: Vectors) -> Vectors:
        """Approximate dot products of stored ``positions`` from their int8 codes (einsum, not
        BLAS: a threaded matrix-vector product stalled on a busy machine)."""
        weights = np.asarray(query * self.scale, np.float32)
        return np.asarray(
            np.einsum(
                "ij,j->i", self.codes[positions], weights, dtype=np.float32, casting="unsafe"
            ),
            np.float32,
        )


class DenseMatrix:
    """The in-memory vectors of one model, kept in sync with the index incrementally."""

    def __init__(self, dim: int, *, compressed: bool = False) -> None:
        self.dim = dim
        self.compressed = compressed
        self.exact_lookup: ExactLookup | None = None
        self._lock = threading.RLock()
        self._matrix: Vectors = np.zeros((0, dim), np.float32)
        self._packed: Compressed | None = None
        self._rows = _empty_rows()
        self._alive: Mask = np.zeros(0, bool)
        self._pending: list[tuple[Ids, Vectors, npt.NDArray[np.int32], npt.NDArray[np.int8]]] = []
        self._section_codes: dict[str, int] = {}

    def __len__(self) -> int:
        with self._lock:
            self._consolidate()
            return int(np.count_nonzero(self._alive))

    def section_code(self, tipo: str) -> int:
        """A small integer standing for a section tipo."""
        with self._lock:
            return self._section_codes.setdefault(tipo, len(self._section_codes))

    def section_codes(self) -> dict[str, int]:
        """Every section tipo seen so far with its code."""
        with self._lock:
            return dict(self._section_codes)

    def add(
        self, ids: list[int], vectors: Vectors, sections: list[str], flags: list[bool | None]
    ) -> None:
        """Append rows (consolidated lazily, on the next search)."""
        if not ids:
            return
        codes = np.array([self.section_code(s) for s in sections], np.int32)
        marks = np.array([NO_FLAG if f is None else int(f) for f in flags], np.int8)
        block = np.asarray(vectors, np.float32).reshape(len(ids), self.dim)
        with self._lock:
            self._pending.append((np.array(ids, np.int64), block, codes, marks))

    def remove(self, ids: list[int]) -> None:
        """Mark rows gone (compacted when many are)."""
        if not ids:
            return
        with self._lock:
            self._consolidate()
            self._alive[np.isin(self._rows.ids, np.array(ids, np.int64))] = False

    def _consolidate(self) -> None:
        """Append pending rows; drop removed rows once they are many."""
        dead = len(self._alive) - int(np.count_nonzero(self._alive))
        compact = dead > max(1000, len(self._alive) // 5)
        if not self._pending and not compact:
            return
        ids, block, sections, flags = self._take_pending()
        if not len(self._alive) and not self.compressed:  # the first load: no copy
            self._rows, self._matrix = Rows(ids, sections, flags), block
            self._alive = np.ones(len(ids), bool)
            return
        keep = self._alive if compact else np.ones(len(self._alive), bool)
        self._rows = Rows(
            np.concatenate([self._rows.ids[keep], ids]),
            np.concatenate([self._rows.sections[keep], sections]),
            np.concatenate([self._rows.flags[keep], flags]),
        )
        self._alive = np.concatenate([self._alive[keep], np.ones(len(ids), bool)])
        if not self.compressed:
            self._matrix = np.concatenate([self._matrix[keep], block])
        elif self._packed is None:
            self._packed = Compressed(block)
        else:
            self._packed.select(keep)
            self._packed.extend(block)

    def _take_pending(
        self,
    ) -> tuple[Ids, Vectors, npt.NDArray[np.int32], npt.NDArray[np.int8]]:
        parts, self._pending = self._pending, []
        if not parts:
            return (
                np.zeros(0, np.int64),
                np.zeros((0, self.dim), np.float32),
                np.zeros(0, np.int32),
                np.zeros(0, np.int8),
            )
        if len(parts) == 1:  # a whole model's vectors loaded at once (service._load)
            ids, block, sections, flags = parts[0]
            return ids, block.astype(np.float32, copy=False), sections, flags
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]).astype(np.float32, copy=False),
            np.concatenate([p[2] for p in parts]),
            np.concatenate([p[3] for p in parts]),
        )

    def mask(
        self,
        *,
        sections: set[int] | None = None,
        restricted_sections: set[int] | None = None,
        chunk_ids: list[int] | None = None,
    ) -> Mask:
        """Rows allowed by a section filter, an egress filter and/or a chunk-id filter."""
        with self._lock:
            self._consolidate()
            allowed = self._alive.copy()
            if sections is not None:
                allowed &= np.isin(self._rows.sections, list(sections))
            if restricted_sections is not None:
                in_restricted = np.isin(self._rows.sections, list(restricted_sections))
                flags = self._rows.flags
                allowed &= (flags == 0) | ((flags == NO_FLAG) & ~in_restricted)
            if chunk_ids is not None:
                allowed &= np.isin(self._rows.ids, np.array(chunk_ids, np.int64))
            return allowed

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the rows still: a :meth:`mask` and the :meth:`search` that uses it, taken
        inside one ``with matrix.held():``, see the same rows even while indexing adds or
        compacts rows on another thread (rows added meanwhile wait in the pending list)."""
        with self._lock:
            yield

    def search(
        self, query: Vectors, k: int, allowed: Mask | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(chunk_id, cosine)`` among ``allowed`` rows, best first.

        Raises:
            IndexError_: ``index.stale_filter`` when ``allowed`` was computed for other rows
                (take the mask and the search inside :meth:`held`); rows removed since the
                mask was taken are never returned.
        """
        query = np.asarray(query, np.float32).reshape(self.dim)
        with self._lock:
            self._consolidate()
            if allowed is None:
                allowed = self._alive
            elif len(allowed) != len(self._alive):
                raise _stale_filter(len(allowed), len(self._alive))
            else:
                allowed = allowed & self._alive
            if self._packed is not None:
                return self._search_compressed(query, k, allowed)
            return self._search_exact(query, k, allowed)

    def _search_exact(self, query: Vectors, k: int, allowed: Mask) -> list[tuple[int, float]]:
        n_allowed = int(np.count_nonzero(allowed))
        if n_allowed == 0:
            return []
        if n_allowed < len(allowed) // 4:
            rows = np.flatnonzero(allowed)
            scores = self._matrix[rows] @ query
        else:
            rows = None
            scores = self._matrix @ query
            if n_allowed < len(allowed):
                scores[~allowed] = -np.inf
        top = _top(scores, min(k, n_allowed))
        picked = top if rows is None else rows[top]
        return [
            (int(self._rows.ids[i]), float(s)) for i, s in zip(picked, scores[top], strict=True)
        ]

    def _search_compressed(self, query: Vectors, k: int, allowed: Mask) -> list[tuple[int, float]]:
        assert self._packed is not None
        n_allowed = int(np.count_nonzero(allowed))
        if n_allowed == 0:
            return []
        wanted = min(max(SHORTLIST, 4 * k), n_allowed)
        positions = self._packed.shortlist(query, allowed, n_allowed, wanted)
        approx = self._packed.rescore(positions, query)
        top = _top(approx, min(max(4 * k, 40), len(positions)))
        rows = self._packed.order[positions[top]].astype(np.int64)
        return self._rescore_exact(rows, approx[top], query, k)

    def _rescore_exact(
        self, rows: Ids, approx: Vectors, query: Vectors, k: int
    ) -> list[tuple[int, float]]:
        ids = [int(i) for i in self._rows.ids[rows]]
        exact = self.exact_lookup(ids) if self.exact_lookup else {}
        scored = [
            (cid, float(exact[cid] @ query) if cid in exact else float(a))
            for cid, a in zip(ids, approx, strict=True)
        ]
        scored.sort(key=lambda item: -item[1])
        return scored[:k]


def _query_words(query: Vectors) -> npt.NDArray[np.uint64]:
    """The query's sign bits as 64-bit words, laid out like :meth:`Compressed._signs`."""
    packed = np.packbits(query > 0)
    return np.pad(packed, (0, (-len(packed)) % 8)).view(np.uint64)


def _stored(spans: Spans, picked: Ids) -> Ids:
    """Stored positions of indices ``picked`` into the concatenation of ``spans``."""
    lengths = spans[:, 1] - spans[:, 0]
    ends = np.cumsum(lengths)
    shift = spans[:, 0] - (ends - lengths)  # stored minus concatenated, per span
    return np.asarray(picked + shift[np.searchsorted(ends, picked, side="right")], np.int64)


def _stale_filter(mask_rows: int, rows: int) -> IndexError_:
    return IndexError_(
        "index.stale_filter",
        "The search filter was computed for an older state of the index; nothing was returned.",
        hint="Search again.",
        category="internal",
        retryable=True,
        details={"mask_rows": mask_rows, "rows": rows},
    )


def _nearest(distances: npt.NDArray[np.uint16], count: int) -> Ids:
    """Rows with the ``count`` smallest distances (ties at the cut-off kept): a histogram
    threshold, several times cheaper than ``argpartition`` over a million rows."""
    histogram = np.bincount(distances, minlength=1)
    cut = int(np.searchsorted(np.cumsum(histogram), count))
    return np.asarray(np.flatnonzero(distances <= cut), np.int64)


def _top(scores: npt.NDArray[np.float32], k: int) -> Ids:
    """Indices of the ``k`` largest scores, best first."""
    if k <= 0:
        return np.zeros(0, np.int64)
    part = np.argpartition(scores, -k)[-k:] if k < len(scores) else np.arange(len(scores))
    return np.asarray(part[np.argsort(-scores[part], kind="stable")], np.int64)


def kmeans(matrix: Vectors, lists: int, iterations: int = 8) -> Vectors:
    """``lists`` unit centroids of a sample of ``matrix`` (spherical k-means, fixed seed)."""
    rng = np.random.default_rng(0)
    take = min(len(matrix), lists * TRAIN_PER_LIST)
    sample = np.asarray(matrix[np.sort(rng.choice(len(matrix), take, replace=False))], np.float32)
    sample /= np.maximum(np.linalg.norm(sample, axis=1, keepdims=True), 1e-12)
    centroids = sample[rng.choice(take, min(lists, take), replace=False)].copy()
    for _ in range(iterations):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        empty = ~np.bincount(nearest, minlength=len(centroids)).astype(bool)
        sums[empty] = sample[rng.choice(take, int(empty.sum()))]
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return np.asarray(centroids, np.float32)
