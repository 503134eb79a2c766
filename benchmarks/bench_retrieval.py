"""Every search mode on every evaluation set, in one table.

First build the sets (``python benchmarks/build_eval_sets.py``), then::

    python benchmarks/bench_retrieval.py [--sets DIR] [--workdir DIR] [--index-only]

Each corpus is imported and indexed once (MiniLM and USE vectors) into ``--workdir`` (default
``/tmp/arxiu-eval-work``), which later runs reuse, so a second run only searches. The same
figures come from ``arxiu eval retrieval CORPUS QUERIES QRELS --workdir DIR/<set>`` (hybrid,
dense and lexical with the default models; ``--model all-MiniLM-L6-v2`` or ``--model use``
for one model's dense alone). Columns: ``lexical`` BM25, ``minilm`` and ``use`` each model's
dense list alone, ``dense`` both models fused, ``hybrid`` the default; the metric is nDCG@10
(MRR@10 for the nomisma known-item sets); ``ratio`` is hybrid over the best single mode.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from app.core.index.embedders import Embedder, SentenceTransformerEmbedder, UseEmbedder  # noqa: E402
from app.core.index.evaluation import evaluate_retrieval  # noqa: E402

DBPEDIA = REPO.parent / "shared" / "data" / "beir-dbpedia-5k"
SETS = Path("/tmp/arxiu-eval-sets")
WORK = Path("/tmp/arxiu-eval-work")

Variant = tuple[str, Path, Path]


def catalogue(sets: Path) -> list[tuple[str, Path, list[Variant], str]]:
    """(set name, corpus folder, variants, metric) for DBpedia and every built set."""
    found = [
        (
            "dbpedia-5k",
            DBPEDIA,
            [("en", DBPEDIA / "queries.jsonl", DBPEDIA / "qrels.tsv")],
            "ndcg@10",
        )
    ]
    for name, metric in (
        ("nomisma-am", "mrr@10"),
        ("igch-mints", "ndcg@10"),
        ("tate-subjects", "ndcg@10"),
    ):
        folder = sets / name
        variants = [
            (q.stem.removeprefix("queries-"), q, folder / f"qrels-{q.stem[8:]}.tsv")
            for q in sorted(folder.glob("queries-*.jsonl"))
        ]
        if variants:
            found.append((name, folder, variants, metric))
    return found


def main() -> None:
    """Index every corpus (once), then score every mode on every variant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--workdir", type=Path, default=WORK)
    parser.add_argument("--index-only", action="store_true")
    parser.add_argument("--only", help="only this set")
    args = parser.parse_args()
    minilm, use = SentenceTransformerEmbedder(), UseEmbedder()
    both: tuple[Embedder, ...] = (minilm, use)
    print(
        f"{'set':<14} {'variant':<9} {'metric':<7} {'lexical':>7} {'minilm':>7} {'use':>7} "
        f"{'dense':>7} {'hybrid':>7} {'ratio':>6}"
    )
    for name, corpus, variants, metric in catalogue(args.sets):
        if args.only and name != args.only:
            continue
        work = args.workdir / name
        if args.index_only:
            start = time.perf_counter()
            q, r = variants[0][1:]
            evaluate_retrieval(corpus, q, r, modes=(), embedder=both, workdir=work)
            print(f"{name}: indexed in {time.perf_counter() - start:.0f} s", flush=True)
            continue
        for variant, queries, qrels in variants:
            row = {}
            fused = evaluate_retrieval(corpus, queries, qrels, embedder=both, workdir=work)
            row.update(fused)
            for label, model in (("minilm", minilm), ("use", use)):
                alone = evaluate_retrieval(
                    corpus, queries, qrels, modes=("dense",), embedder=(model,), workdir=work
                )
                row[label] = alone["dense"]
            scores = {mode: row[mode][metric] for mode in row}
            best = max(scores[m] for m in ("lexical", "minilm", "use", "dense"))
            print(
                f"{name:<14} {variant:<9} {metric:<7} {scores['lexical']:>7.4f} "
                f"{scores['minilm']:>7.4f} {scores['use']:>7.4f} {scores['dense']:>7.4f} "
                f"{scores['hybrid']:>7.4f} {scores['hybrid'] / best if best else 0:>6.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
