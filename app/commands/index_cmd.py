"""``arxiu index``, ``arxiu search``, ``arxiu eval retrieval``: the semantic index from a shell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands.common import ProgressBar, open_current, print_json
from app.core.archive import RecordKey
from app.core.index import Index, SearchFilter
from app.core.index.embedders import default_embedders
from app.core.index.hits import SearchHit
from app.core.index.service import MODEL_SETTING, IndexStats

MODEL_HELP = (
    "embedding model folder, 'use', 'all-MiniLM-L6-v2', 'dual' or 'hashing' "
    "(default: the archive's setting, else MiniLM and USE multilingual)"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``index``, ``search`` and ``eval`` commands."""
    index = sub.add_parser("index", help="bring the semantic index up to date")
    index.add_argument("--rebuild", action="store_true", help="re-chunk every record")
    index.add_argument("--model", help=MODEL_HELP)
    index.add_argument("--archive", default=argparse.SUPPRESS, help="archive folder")
    index.set_defaults(func=run_index)

    search = sub.add_parser("search", help="search the archive by meaning and words")
    search.add_argument("query")
    search.add_argument("--section", action="append", default=[], help="only this section")
    search.add_argument("--record", action="append", default=[], help="only SECTION/ID")
    search.add_argument("--k", type=int, default=10, help="number of hits (default 10)")
    search.add_argument("--mode", choices=["hybrid", "dense", "lexical"], default="hybrid")
    search.add_argument("--records", action="store_true", help="one hit per record")
    search.add_argument("--egress", action="store_true", help="exclude restricted material")
    search.add_argument("--model", help=MODEL_HELP)
    search.add_argument(
        "--wait", action="store_true", help="embed what is pending first (default: search now)"
    )
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument("--archive", default=argparse.SUPPRESS, help="archive folder")
    search.set_defaults(func=run_search)

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
    retrieval.set_defaults(func=run_eval)


def run_index(args: argparse.Namespace) -> int:
    """Index what is pending (everything with ``--rebuild``), showing a progress bar."""
    with open_current(args) as archive:
        archive.db.check_intact()  # report a damaged file before writing anything into it
        index = Index(archive, default_embedders(args.model or archive.meta(MODEL_SETTING)))
        if args.rebuild:
            index.rebuild()
        bar = ProgressBar("indexing")
        index.add_progress_listener(lambda p: bar.update(p.done, p.total))
        final = index.index_now()
        bar.finish()
        stats = index.stats()
        index.close()
    if final.error is not None:
        raise final.error
    models = ", ".join(f"{model} {share:.0%}" for model, share in stats.coverage)
    print(f"{stats.chunks} chunks ({models}); {final.done} items indexed now.")
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Print the best hits for a query, at once from what is indexed (``--wait``: after
    embedding what is pending); how complete the dense index is goes to stderr."""
    with open_current(args) as archive:
        index = Index(archive, default_embedders(args.model or archive.meta(MODEL_SETTING)))
        index.sync_lexical()
        if args.wait:
            bar = ProgressBar("indexing")
            index.add_progress_listener(lambda p: bar.update(p.done, p.total))
            index.index_now()
            bar.finish()
        stats = index.stats()
        if args.mode != "lexical" and stats.dense_complete < 1.0:
            print(completeness(stats), file=sys.stderr)
        where = SearchFilter(
            sections=tuple(args.section),
            records=tuple(RecordKey.parse(r) for r in args.record),
            exclude_restricted=args.egress,
        )
        hits = index.search(
            args.query, k=args.k, mode=args.mode, filter=where, group_by_record=args.records
        )
        index.close()
    if args.json:
        print_json([h.to_dict() for h in hits])
        return 0
    for rank, hit in enumerate(hits, start=1):
        print(_format_hit(rank, hit))
    if not hits:
        print("no hits")
    return 0


def completeness(stats: IndexStats) -> str:
    """A sentence on how much of the archive the dense search covers yet."""
    models = ", ".join(f"{model} {share:.0%}" for model, share in stats.coverage)
    return (
        f"note: the semantic index is incomplete ({models} of {stats.chunks} chunks embedded); "
        "these hits come from what is indexed so far. Run `arxiu index` or search with --wait."
    )


def _format_hit(rank: int, hit: SearchHit) -> str:
    where = f" @{hit.timecode}" if hit.timecode else f" p.{hit.page}" if hit.page else ""
    head = f"{rank:>2}. {hit.key} {hit.label} [{hit.field_tipo} {hit.lang}{where}] {hit.score:.3f}"
    return f"{head}\n    {hit.snippet}"


def run_eval(args: argparse.Namespace) -> int:
    """Score retrieval on BEIR data and print the metrics per mode."""
    from app.core.index.evaluation import ALL_MODES, evaluate_retrieval

    modes = ALL_MODES if args.mode == "all" else (args.mode,)
    bar = ProgressBar("indexing")
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
