"""Exact cosine search over an in-memory matrix, and a compressed mode for ~1M chunks.

Rows are L2-normalised, so cosine is a dot product: ``scores = matrix @ query`` then
``argpartition`` for the top k. Rows carry the chunk id, a section code and the record's own
restriction flag, so filters become boolean masks applied *before* ranking.

The compressed mode keeps no float32 matrix: sign bits (48 bytes a row at 384 dims) pick a
shortlist by Hamming distance, int8 rows (per-dimension scale) re-rank it, and the final few are
rescored exactly from their stored float32 vectors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
Ids = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
ExactLookup = Callable[[list[int]], dict[int, Vectors]]

NO_FLAG = -1
SHORTLIST = 3000
"""Rows kept by the Hamming pass in compressed mode (before int8 re-ranking)."""


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
    """

    def __init__(self, matrix: Vectors) -> None:
        peak = np.abs(matrix).max(axis=0) if len(matrix) else np.full(matrix.shape[1], 0.25)
        self.scale = (np.maximum(peak, 1e-6) / 127.0).astype(np.float32)
        self.codes = self._quantise(matrix)
        self.bits = self._signs(matrix)

    def _quantise(self, matrix: Vectors) -> npt.NDArray[np.int8]:
        return np.asarray(np.clip(np.round(matrix / self.scale), -127, 127), dtype=np.int8)

    @staticmethod
    def _signs(matrix: Vectors) -> npt.NDArray[np.uint64]:
        packed = np.packbits(matrix > 0, axis=1)
        packed = np.pad(packed, ((0, 0), (0, (-packed.shape[1]) % 8)))
        return np.ascontiguousarray(packed.view(np.uint64).T)

    def select(self, keep: Mask) -> None:
        """Drop the rows not in ``keep``."""
        self.codes = self.codes[keep]
        self.bits = np.ascontiguousarray(self.bits[:, keep])

    def extend(self, matrix: Vectors) -> None:
        """Append rows (quantised with the existing scale)."""
        self.codes = np.concatenate([self.codes, self._quantise(matrix)])
        self.bits = np.ascontiguousarray(np.concatenate([self.bits, self._signs(matrix)], axis=1))

    def hamming(self, query: Vectors) -> npt.NDArray[np.uint16]:
        """Hamming distance of every row's sign bits to the query's."""
        packed = np.packbits(query > 0)
        packed = np.pad(packed, (0, (-len(packed)) % 8)).view(np.uint64)
        total = np.zeros(self.bits.shape[1], dtype=np.uint16)
        for word, qword in zip(self.bits, packed, strict=True):
            total += np.bitwise_count(word ^ qword)
        return total

    def rescore(self, rows: Ids, query: Vectors) -> Vectors:
        """Approximate dot products of ``rows`` from their int8 codes."""
        return np.asarray(self.codes[rows].astype(np.float32) @ (query * self.scale), np.float32)


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
            return int(self._alive.sum())

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
        dead = len(self._alive) - int(self._alive.sum())
        compact = dead > max(1000, len(self._alive) // 5)
        if not self._pending and not compact:
            return
        keep = self._alive if compact else np.ones(len(self._alive), bool)
        ids, block, sections, flags = self._take_pending()
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

    def search(
        self, query: Vectors, k: int, allowed: Mask | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(chunk_id, cosine)`` among ``allowed`` rows, best first."""
        query = np.asarray(query, np.float32).reshape(self.dim)
        with self._lock:
            self._consolidate()
            if allowed is None:
                allowed = self._alive
            if self._packed is not None:
                return self._search_compressed(query, k, allowed)
            return self._search_exact(query, k, allowed)

    def _search_exact(self, query: Vectors, k: int, allowed: Mask) -> list[tuple[int, float]]:
        n_allowed = int(allowed.sum())
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
        n_allowed = int(allowed.sum())
        if n_allowed == 0:
            return []
        distances = self._packed.hamming(query)
        if n_allowed < len(allowed):
            distances[~allowed] = np.iinfo(np.uint16).max
        rows = _nearest(distances, min(max(SHORTLIST, 4 * k), n_allowed))
        approx = self._packed.rescore(rows, query)
        keep = min(max(4 * k, 40), len(rows))
        top = _top(approx, keep)
        return self._rescore_exact(rows[top], approx[top], query, k)

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
