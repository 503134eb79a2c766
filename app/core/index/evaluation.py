"""Retrieval evaluation on BEIR-format data: import, index, search every query, score.

The corpus is imported into a scratch archive with the BEIR importer, indexed with the chosen
embedder, and each judged query is searched once per mode (one hit per record, 100 deep). The
scores are those of :mod:`app.core.index.metrics`. :func:`evaluate_postgres` scores the same
queries on a PostgreSQL copy of such an archive, searched in the server, so the two engines'
figures can be set side by side.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.archive import open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.beir import beir_ids, corpus_name, source_of
from app.core.archive.model import RecordKey
from app.core.errors import IndexError_
from app.core.index.embedders import Embedder, default_embedders
from app.core.index.hits import Searcher, SearchMode
from app.core.index.indexer import Progress, as_embedders
from app.core.index.metrics import Qrels, evaluate
from app.core.index.service import MODEL_SETTING, Index
from app.core.phrases import Phrase

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
        Phrase.of("Cannot read {path}: {why}", path=str(path), why=str(exc)),
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
        results = score_runs(index, texts, judged, beir_ids(archive, name), modes)
        index.close()
        return results
    finally:
        archive.close()


def score_runs(
    searcher: Searcher,
    texts: dict[str, str],
    judged: Qrels,
    ids: dict[RecordKey, str],
    modes: tuple[SearchMode, ...] = ALL_MODES,
) -> dict[str, dict[str, float]]:
    """Scores per mode of ``searcher`` on the judged queries (one hit per record,
    :data:`DEPTH` deep; ``ids``: record key → judged document id), whatever engine it reads."""
    results: dict[str, dict[str, float]] = {}
    for mode in modes:
        run = {
            qid: [
                ids[h.key]
                for h in searcher.search(text, k=DEPTH, mode=mode, group_by_record=True)
                if h.key in ids
            ]
            for qid, text in texts.items()
            if qid in judged
        }
        results[mode] = evaluate(run, judged)
    return results


def evaluate_postgres(
    url: str,
    corpus: Path,
    queries: Path,
    qrels: Path,
    *,
    modes: tuple[SearchMode, ...] = ALL_MODES,
    embedder: Embedder | Sequence[Embedder] | None = None,
) -> dict[str, dict[str, float]]:
    """Scores per mode on a PostgreSQL archive that already holds ``corpus`` imported and
    indexed (``arxiu archive copy`` of an evaluation archive): searched in the server
    (:mod:`app.core.index.postgres`), the documents' ids read from its ``external_ids``."""
    from app.core.archive.postgres.connect import connect  # psycopg: the postgres extra
    from app.core.index.postgres import open_search
    from app.core.index.postgres.records import external_ids, meta

    texts, judged = load_queries(queries), load_qrels(qrels)
    with connect(url) as conn:
        ids = external_ids(conn, source_of(corpus_name(Path(corpus))))
        chosen = embedder if embedder is not None else default_embedders(meta(conn, MODEL_SETTING))
    engine = open_search(url, as_embedders(chosen))
    try:
        return score_runs(engine, texts, judged, ids, modes)
    finally:
        engine.close()
