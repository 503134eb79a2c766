"""``arxiu index`` and ``arxiu eval retrieval``: the semantic index from a shell (``arxiu search``
is :mod:`app.commands.search_cmd`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands import cli_words
from app.commands.cli_words import cli_language, words
from app.commands.common import ProgressBar, open_current, print_json
from app.core.index import open_index
from app.core.index.embedders import default_embedders
from app.core.index.hits import SearchMode
from app.core.index.indexer import Progress
from app.core.index.progress import Phase, phase_label, progress_text
from app.core.index.service import MODEL_SETTING, IndexStats
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.index.postgres.worker import WorkerResult

WORKER_BATCH = 64
"""``--batch``'s default (:data:`app.core.index.postgres.worker.BATCH`, not imported here so
that ``arxiu index`` on a folder needs no psycopg)."""

MODEL_HELP = (
    "embedding model folder, 'use', 'all-MiniLM-L6-v2', 'dual' or 'hashing' "
    "(default: the archive's setting, else MiniLM and USE multilingual)"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``index`` and ``eval`` commands."""
    index = sub.add_parser("index", help="bring the semantic index up to date")
    index.add_argument("--rebuild", action="store_true", help="re-chunk every record")
    index.add_argument("--model", help=MODEL_HELP)
    index.add_argument(
        "--archive",
        default=argparse.SUPPRESS,
        help="archive folder (with --worker: the shared archive's postgresql:// URL)",
    )
    index.add_argument(
        "--worker",
        action="store_true",
        help="chunk the changed records and embed the waiting chunks of a postgresql:// "
        "archive, as one of any number of workers (resumable: a killed worker's batch is "
        "taken again)",
    )
    index.add_argument(
        "--follow",
        action="store_true",
        help="with --worker, keep waiting for changed records and new chunks",
    )
    index.add_argument(
        "--batch", type=int, default=WORKER_BATCH, help="with --worker, chunks per transaction"
    )
    index.set_defaults(func=run_index)

    evaluation = sub.add_parser("eval", help="evaluate Arxiu's components")
    kinds = evaluation.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    retrieval = kinds.add_parser("retrieval", help="nDCG@10, Recall@100, MRR@10 on BEIR data")
    retrieval.add_argument("corpus", type=Path, help="corpus.jsonl[.gz] or its folder")
    retrieval.add_argument("queries", type=Path, help="queries.jsonl")
    retrieval.add_argument("qrels", type=Path, help="qrels.tsv")
    retrieval.add_argument("--mode", choices=["dense", "lexical", "hybrid", "all"], default="all")
    retrieval.add_argument("--model", help=MODEL_HELP)
    retrieval.add_argument("--workdir", type=Path, help="keep (and reuse) the scratch archive")
    retrieval.add_argument("--json", action="store_true", help="print JSON")
    retrieval.add_argument(
        "--archive",
        help="score a postgresql:// archive that holds the corpus imported and indexed "
        "(searched in the server) instead of a scratch archive",
    )
    retrieval.set_defaults(func=run_eval)


def run_index(args: argparse.Namespace) -> int:
    """Index what is pending (everything with ``--rebuild``), showing a progress bar; a shared
    archive's index is brought up to date in its server, as a worker would."""
    if args.worker:
        return run_worker(args)
    with open_current(args) as archive:
        if not archive.shared:  # report a damaged file before writing anything into it
            archive.sqlite.check_intact()
        index = open_index(archive, default_embedders(args.model or archive.meta(MODEL_SETTING)))
        if args.rebuild:
            index.rebuild()
        bars = PhaseBars()
        index.add_progress_listener(bars.update)
        final = index.index_now()
        bars.finish()
        stats = index.stats()
        index.close()
    if final.error is not None:
        raise final.error
    figures = progress_text(stats.progress)
    w = words()
    chunks = cli_words.counted(w.indexed_chunks, stats.chunks)
    done = cli_words.counted(w.indexed_items, final.items)
    print(w.indexed.format(chunks=chunks, figures=figures, done=done))
    return 0


class PhaseBars:
    """``arxiu index``'s progress: a bar per phase of the run (records chunked, then texts
    embedded), each showing that phase's real count."""

    def __init__(self) -> None:
        self.phase: Phase | None = None
        self.bar: ProgressBar | None = None
        self.shown: tuple[Phase, int, int] | None = None

    def update(self, progress: Progress) -> None:
        """Show ``progress`` (a new bar when its phase changes; a figure once)."""
        figure = (progress.phase, progress.done, progress.total)
        if progress.phase is None or figure == self.shown:
            return
        if self.bar is None or progress.phase != self.phase:
            self.finish()
            self.phase = progress.phase
            self.bar = ProgressBar(phase_label(progress.phase, cli_language()))
        self.shown = (progress.phase, progress.done, progress.total)
        self.bar.update(progress.done, progress.total)

    def finish(self) -> None:
        """End the current bar's line."""
        if self.bar is not None:
            self.bar.finish()


def run_worker(args: argparse.Namespace) -> int:
    """``arxiu index --worker --archive postgresql://…``: chunk the shared archive's changed
    records and embed its waiting chunks with its models
    (:mod:`app.core.index.postgres.worker`), then print the vectors written per model and the
    rate."""
    from app.core.archive.postgres.connect import connect, invalid_url, is_postgres_url
    from app.core.index.postgres.records import meta
    from app.core.index.postgres.worker import run_worker as drain

    url = str(getattr(args, "archive", None) or "")
    if not is_postgres_url(url):
        raise invalid_url(
            url or "(none)", Phrase.of("index --worker takes --archive postgresql://…")
        )
    with connect(url) as conn:
        model = args.model or meta(conn, MODEL_SETTING)
    bar = ProgressBar(words().worker_bar)
    try:
        result = drain(
            url,
            default_embedders(model),
            batch=args.batch,
            follow=args.follow,
            progress=lambda r: bar.update(r.vectors),
        )
    finally:
        bar.finish()
    for line in worker_lines(result):
        print(line)
    return 0


def worker_lines(result: WorkerResult) -> list[str]:
    """What ``arxiu index --worker`` says of a run in the chosen language: the texts embedded
    in how many seconds, at what rate, in how many batches (each count in the form that agrees
    with it, numbers with the language's separators), then the vectors per model."""
    w = words()
    sentence = cli_words.said(
        w.worker_embedded,
        vectors=cli_words.counted(w.worker_texts, result.vectors),
        seconds=result.seconds,
        rate=result.rate,
        batches=cli_words.counted(w.worker_batches, result.batches),
    )
    return [sentence, *(f"  {c.model}: {cli_words.number(c.vectors)}" for c in result.counts)]


def completeness(stats: IndexStats) -> str:
    """A sentence on how much of the archive the dense search covers yet: each model's
    chunks embedded of all, the figure the status bar shows."""
    return words().index_incomplete.format(figures=progress_text(stats.progress))


def run_eval(args: argparse.Namespace) -> int:
    """Score retrieval on BEIR data and print the metrics per mode."""
    from app.core.index.evaluation import ALL_MODES, evaluate_retrieval

    modes = ALL_MODES if args.mode == "all" else (args.mode,)
    if args.archive:
        results = _eval_postgres(args, modes)
    else:
        bar = ProgressBar(words().indexing_bar)
        results = evaluate_retrieval(
            args.corpus,
            args.queries,
            args.qrels,
            modes=modes,
            embedder=default_embedders(args.model),
            workdir=args.workdir,
            progress=lambda p: bar.update(p.done, p.total),
        )
        bar.finish()
    if args.json:
        print_json(results)
        return 0
    print(f"{'mode':<8} {'nDCG@10':>8} {'R@100':>8} {'MRR@10':>8}")
    for mode, scores in results.items():
        print(
            f"{mode:<8} {scores['ndcg@10']:>8.4f} {scores['recall@100']:>8.4f} "
            f"{scores['mrr@10']:>8.4f}"
        )
    return 0


def _eval_postgres(
    args: argparse.Namespace, modes: tuple[SearchMode, ...]
) -> dict[str, dict[str, float]]:
    """``eval retrieval --archive postgresql://…``: the corpus scored in the server."""
    from app.core.archive.postgres.connect import invalid_url, is_postgres_url
    from app.core.index.evaluation import evaluate_postgres

    if not is_postgres_url(args.archive):
        raise invalid_url(
            args.archive, Phrase.of("eval retrieval --archive takes a postgresql:// URL")
        )
    model = default_embedders(args.model) if args.model else None
    return evaluate_postgres(
        args.archive, args.corpus, args.queries, args.qrels, modes=modes, embedder=model
    )
