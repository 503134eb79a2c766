"""Retrieval evaluation on BEIR-format data: import, index, search every query, score.

The corpus is imported into a scratch archive with the BEIR importer, indexed with the chosen
embedder, and each judged query is searched once per mode (one hit per record, 100 deep). The
scores are those of :mod:`app.core.index.metrics`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.archive import open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.beir import beir_ids, corpus_name
from app.core.errors import IndexError_
from app.core.index.embedders import Embedder
from app.core.index.hits import SearchMode
from app.core.index.indexer import Progress
from app.core.index.metrics import Qrels, evaluate
from app.core.index.service import Index

DEPTH = 100
ALL_MODES: tuple[SearchMode, ...] = ("dense", "lexical", "hybrid")


def load_queries(path: Path) -> dict[str, str]:
    """BEIR ``queries.jsonl``: query id → text."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        return {str(row["_id"]): str(row["text"]) for row in rows}
    except (OSError, ValueError, KeyError) as exc:
        raise _bad(path, exc) from exc


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR ``qrels.tsv`` (``query-id``, ``corpus-id``, ``score``; a header line is skipped)."""
    qrels: dict[str, dict[str, int]] = {}
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or not parts[2].strip().lstrip("-").isdigit():
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    except OSError as exc:
        raise _bad(path, exc) from exc
    return qrels


def _bad(path: Path, exc: Exception) -> IndexError_:
    return IndexError_(
        "index.eval_input",
        f"Cannot read {path}: {exc}",
        hint="Give BEIR-format files: corpus.jsonl[.gz], queries.jsonl, qrels.tsv.",
        category="input",
    )


def evaluate_retrieval(
    corpus: Path,
    queries: Path,
    qrels: Path,
    *,
    modes: tuple[SearchMode, ...] = ALL_MODES,
    embedder: Embedder | Sequence[Embedder] | None = None,
    workdir: Path | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> dict[str, dict[str, float]]:
    """Scores per mode: ``{"hybrid": {"ndcg@10": ..., "recall@100": ..., "mrr@10": ...}}``.

    Args:
        corpus: the corpus file or its folder.
        queries: ``queries.jsonl``.
        qrels: ``qrels.tsv``.
        modes: the search modes to score.
        embedder: the model or models (default: those of a new archive).
        workdir: keep the scratch archive there (a second run reuses its index); default: a
            temporary folder removed afterwards.
        progress: indexing progress callback.
    """
    texts, judged = load_queries(queries), load_qrels(qrels)
    if workdir is not None:
        return _evaluate_in(Path(workdir), corpus, texts, judged, modes, embedder, progress)
    with tempfile.TemporaryDirectory(prefix="arxiu-eval-") as tmp:
        return _evaluate_in(Path(tmp), corpus, texts, judged, modes, embedder, progress)


def _evaluate_in(
    folder: Path,
    corpus: Path,
    texts: dict[str, str],
    judged: Qrels,
    modes: tuple[SearchMode, ...],
    embedder: Embedder | Sequence[Embedder] | None,
    progress: Callable[[Progress], None] | None,
) -> dict[str, dict[str, float]]:
    archive = open_archive(folder / "archive", create=True)
    try:
        name = corpus_name(Path(corpus))
        if not beir_ids(archive, name):
            run_import(archive, "beir", corpus)
        index = Index(archive, embedder)
        if progress:
            index.add_progress_listener(progress)
        index.index_now()
        ids = beir_ids(archive, name)
        results: dict[str, dict[str, float]] = {}
        for mode in modes:
            run = {
                qid: [
                    ids[h.key]
                    for h in index.search(text, k=DEPTH, mode=mode, group_by_record=True)
                    if h.key in ids
                ]
                for qid, text in texts.items()
                if qid in judged
            }
            results[mode] = evaluate(run, judged)
        index.close()
        return results
    finally:
        archive.close()
