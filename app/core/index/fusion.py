"""Fusing the dense and lexical rankings.

The hybrid ranking is a convex combination of normalised scores, ``0.85 * dense + 0.15 *
bm25``, over the union of both candidate lists (a chunk missing from one list gets 0 from it);
each list is scaled so that its best score is 1 and its 100th is 0. Measured through the whole
pipeline on DBpedia-Entity 5k with MiniLM (``arxiu eval retrieval``): dense 0.505 nDCG@10,
BM25 0.348, this fusion 0.508 (0.505–0.509 for weights 0.8–0.9), while naive reciprocal-rank
fusion fell below dense alone (0.460 in the prototype): RRF throws away how *sure* each
retriever is, and BM25's long tail of one-word matches then outvotes good dense matches.

The 0.85 is a prior that moves per query (:func:`hybrid`): towards the retriever whose best
hits stand further above its 100th (:func:`gap`), and away from models that read the query
yet agree on none of their first hits (:func:`agreement`, with no floor left to the dense
side: models sharing nothing leave BM25's order alone). On IGCH hoards, where every entry
looks alike to a sentence model and BM25 on the mint's name is right, this lifted hybrid from
0.08–0.10 to 0.26–0.50 nDCG@10; DBpedia-Entity hybrid 0.5176 beside the fused dense list's
0.5144 (``docs/search.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

Ranked = Sequence[tuple[int, float]]

DENSE_WEIGHT = 0.85
FOREIGN_DENSE_WEIGHT = 0.4
GAMMA = 2.0
"""How strongly the retrievers' confidence moves the weight (0: the fixed prior)."""
DENSE_SCALE = 2.0
"""A cosine gap of 1/2 between a model's best and 100th hit counts as sure as BM25 whose
100th hit scores nothing (typical gaps, DBpedia-Entity: MiniLM 0.2–0.55, BM25 0.5–0.9)."""
AGREEING_DENSE_SCALE = 2.5
""":data:`DENSE_SCALE` for a query every model reads: there the models' agreement
(:data:`AGREEMENT`) already catches a model that is sure of the wrong thing, so a sure
dense list may weigh more (DBpedia-Entity, ``docs/search.md``)."""
AGREEMENT = 0.2
"""Models that both read the query and share fewer than this share of their first
:data:`AGREEMENT_DEPTH` chunks are guessing: their confidence is scaled down by
``(agreement / AGREEMENT) ** AGREEMENT_POWER``. Two shared chunks of ten are enough
(DBpedia-Entity: 11 of its 40 queries share 2–3; hybrid 0.5136 → 0.5176 with 0.2 instead of
0.3), one is guessing (IGCH hoards: the models share 0–1), ``docs/search.md``."""
AGREEMENT_DEPTH = 10
AGREEMENT_POWER = 3.0
MIN_SHARE = 0.0
"""No floor under the dense share: where the models share nothing, BM25 alone orders (IGCH:
any dense weight let the models' frame-matching reorder BM25's hits on the mint's name,
0.93× → 0.96×)."""
LEXICAL_FLOOR = 0.05
"""BM25 always keeps this share: a dense list that looks sure (a hashing or near-duplicate
space) still has its ties broken by the words (``test_sources``: the one interview that
stands out is the only one cited)."""
RRF_K = 60
NORM_DEPTH = 100


def min_max(ranked: Ranked, depth: int = NORM_DEPTH) -> dict[int, float]:
    """Scores rescaled so the best is 1 and the ``depth``-th is 0 (lower ones clip to 0).

    Anchoring the zero at a fixed rank keeps the scale independent of how deep the caller
    looked (a 2,000-deep list would otherwise squash every difference near the top).
    """
    if not ranked:
        return {}
    values = sorted((score for _, score in ranked), reverse=True)
    high, low = values[0], values[min(depth, len(values)) - 1]
    span = high - low
    return {cid: max((s - low) / span, 0.0) if span > 0 else 1.0 for cid, s in ranked}


def convex(dense: Ranked, lexical: Ranked, alpha: float = DENSE_WEIGHT) -> list[tuple[int, float]]:
    """``alpha * dense + (1 - alpha) * lexical`` of normalised scores, best first."""
    d, lex = min_max(dense), min_max(lexical)
    fused = {cid: alpha * d.get(cid, 0.0) + (1 - alpha) * lex.get(cid, 0.0) for cid in d | lex}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def combine_dense(weighted: Sequence[tuple[Ranked, float]]) -> list[tuple[int, float]]:
    """The dense lists of several models as one: weighted normalised scores, best first.

    One list is returned as it is (raw cosines).
    """
    lists = [(ranked, w) for ranked, w in weighted if ranked and w > 0]
    if not lists:
        return []
    if len(lists) == 1:
        return list(lists[0][0])
    total = sum(w for _, w in lists)
    fused: dict[int, float] = {}
    for ranked, weight in lists:
        for cid, score in min_max(ranked).items():
            fused[cid] = fused.get(cid, 0.0) + weight * score / total
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def gap(ranked: Ranked, depth: int = NORM_DEPTH, *, relative: bool = False) -> float:
    """How far a list's best score stands above its ``depth``-th, in the retriever's own
    units (cosine for a model) or, ``relative``, as a share of the best (BM25, whose scale
    grows with the query's length and its words' rarity)."""
    if len(ranked) < 2:
        return 0.0
    values = sorted((score for _, score in ranked), reverse=True)
    high, low = values[0], values[min(depth, len(values)) - 1]
    if relative:
        return (high - low) / high if high > 0 else 0.0
    return high - low


def dense_confidence(weighted: Sequence[tuple[Ranked, float]]) -> float:
    """The models' raw cosine gaps (:func:`gap`), averaged with their weights.

    A model whose best hits stand well above the rest found something; one that scores
    every document alike (IGCH hoard entries, all alike to a sentence model) is guessing.
    """
    lists = [(ranked, w) for ranked, w in weighted if ranked and w > 0]
    total = sum(w for _, w in lists)
    return sum(w * gap(ranked) for ranked, w in lists) / total if total else 0.0


def agreement(lists: Sequence[Ranked], k: int = AGREEMENT_DEPTH) -> float:
    """How much the lists' first ``k`` chunks overlap, 0 to 1 (mean over pairs, each pair
    as a share of its shorter list); 1 for fewer than two lists."""
    tops = [{cid for cid, _ in ranked[:k]} for ranked in lists if ranked]
    pairs = [(a, b) for i, a in enumerate(tops) for b in tops[i + 1 :]]
    if not pairs:
        return 1.0
    return sum(len(a & b) / min(len(a), len(b)) for a, b in pairs) / len(pairs)


def dense_share(
    confidence: float, lexical: Ranked, prior: float = DENSE_WEIGHT, scale: float = DENSE_SCALE
) -> float:
    """The dense weight for one query: ``prior`` moved towards the retriever that is more
    sure, ``weight ∝ prior · (scale · dense gap)**GAMMA`` against ``(1 − prior) ·
    (relative BM25 gap)**GAMMA`` (:func:`gap`)."""
    if not lexical:
        return 1.0
    d = prior * float(max(scale * confidence, 1e-3) ** GAMMA)
    lex = (1 - prior) * float(max(gap(lexical, relative=True), 1e-3) ** GAMMA)
    return float(min(max(d / (d + lex), MIN_SHARE), 1 - LEXICAL_FLOOR))


def hybrid(
    dense: Sequence[tuple[Ranked, float]],
    lexical: Ranked,
    understood: bool = True,
    *,
    agreeing: bool = False,
) -> list[tuple[int, float]]:
    """The models' weighted lists (:func:`combine_dense`) fused with BM25 by a per-query
    dense weight (:func:`dense_share`).

    Args:
        dense: each model's list and weight (a model weighed 0 still counts in the
            agreement).
        lexical: the BM25 list.
        understood: some model reads the query's language (else the prior leans to BM25).
        agreeing: every model reads the query's language, so they should agree when they
            found something (IGCH: MiniLM and USE share none of their first ten hoards,
            and BM25 on the mint's name is right): the dense confidence is scaled by
            ``min(1, agreement / AGREEMENT) ** AGREEMENT_POWER`` and counts with
            :data:`AGREEING_DENSE_SCALE`.
    """
    combined = combine_dense(dense)
    if not combined:
        return list(lexical)
    if not lexical:
        return combined
    confidence = dense_confidence(dense)
    scale = DENSE_SCALE
    if agreeing:
        shared = agreement([ranked for ranked, _ in dense])
        confidence *= min(1.0, shared / AGREEMENT) ** AGREEMENT_POWER
        scale = AGREEING_DENSE_SCALE
    prior = DENSE_WEIGHT if understood else FOREIGN_DENSE_WEIGHT
    return convex(combined, lexical, dense_share(confidence, lexical, prior, scale))


def rrf(lists: Sequence[Ranked], weights: Sequence[float] | None = None) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion (kept for comparison in the benchmarks)."""
    weights = weights or [1.0] * len(lists)
    fused: dict[int, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        for rank, (cid, _) in enumerate(ranked):
            fused[cid] = fused.get(cid, 0.0) + weight / (RRF_K + rank + 1)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
