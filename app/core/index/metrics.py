"""Retrieval metrics as trec_eval / pytrec_eval compute them: nDCG@k, Recall@k, MRR@k.

Gains are the graded judgements themselves (0, 1, 2...), discounted by ``log2(rank + 1)``; the
ideal ranking orders every judged document by its grade. Queries without judgements are not
scored; a judged query with nothing retrieved scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Sequence[str]]


def ndcg_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain of one ranking at cut-off ``k``."""
    dcg = sum(judged.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant documents (grade > 0) found in the first ``k``."""
    relevant = {doc for doc, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document within ``k`` (0 when none)."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def evaluate(run: Run, qrels: Qrels) -> dict[str, float]:
    """Mean ``ndcg@10``, ``recall@100`` and ``mrr@10`` over the queries that have judgements."""
    scored = [q for q, judged in qrels.items() if any(g > 0 for g in judged.values())]
    if not scored:
        return {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    totals = {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    for query in scored:
        ranked = list(dict.fromkeys(run.get(query, ())))
        totals["ndcg@10"] += ndcg_at(ranked, qrels[query], 10)
        totals["recall@100"] += recall_at(ranked, qrels[query], 100)
        totals["mrr@10"] += mrr_at(ranked, qrels[query], 10)
    return {name: value / len(scored) for name, value in totals.items()}
