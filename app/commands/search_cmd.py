"""``arxiu search``: the archive searched by meaning and words, one line per record.

Records are listed once each, grouped by section, exact titles first, each with its date,
languages and the passage that matched, the query's words in ``[brackets]`` — the list the
desktop app's results pane shows (:func:`app.core.index.record_hits.search_records`).
``--sort``, ``--lang-filter``, ``--from`` and ``--to`` order and narrow it as the pane's
controls do (:mod:`app.core.index.hit_order`). ``--chunks`` prints the ranked passages
instead, several per record, as the index returns them.
"""

from __future__ import annotations

import argparse
import sys

from app.commands import cli_words
from app.commands.common import ProgressBar, add_archive_argument, open_current, print_json
from app.commands.index_cmd import MODEL_HELP, completeness
from app.core.archive import Archive, RecordKey
from app.core.archive.hierarchy import subtree
from app.core.archive.shown_values import language_tag
from app.core.index import SearchFilter, open_index
from app.core.index.embedders import default_embedders
from app.core.index.hit_order import SORT_ORDERS, RecordFilter, by_section, filter_hits, sort_hits
from app.core.index.hits import SearchHit
from app.core.index.record_hits import RecordHit, search_records
from app.core.index.service import MODEL_SETTING

PASSAGE_CHARS = 240
WITHIN_HELP = "only SECTION/ID and every record under it (a fonds and all it holds)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``search`` command."""
    search = sub.add_parser("search", help="search the archive by meaning and words")
    search.add_argument("query")
    search.add_argument("--section", action="append", default=[], help="only this section")
    search.add_argument("--record", action="append", default=[], help="only SECTION/ID")
    search.add_argument("--within", metavar="SECTION/ID", help=WITHIN_HELP)
    search.add_argument("--k", type=int, default=10, help="number of records (default 10)")
    search.add_argument("--mode", choices=["hybrid", "dense", "lexical"], default="hybrid")
    search.add_argument(
        "--chunks", action="store_true", help="list ranked passages, several per record"
    )
    search.add_argument("--records", action="store_true", help=argparse.SUPPRESS)
    search.add_argument("--sort", choices=SORT_ORDERS, default="relevance")
    search.add_argument(
        "--lang-filter", action="append", default=[], metavar="LG", help="only records in LG"
    )
    search.add_argument("--from", dest="year_from", type=int, help="only records from this year")
    search.add_argument("--to", dest="year_to", type=int, help="only records up to this year")
    search.add_argument(
        "--lang",
        help="language of titles and sections (lg-cat...; default: the UI's, from ARXIU_LANG)",
    )
    search.add_argument("--egress", action="store_true", help="exclude restricted material")
    search.add_argument("--model", help=MODEL_HELP)
    search.add_argument(
        "--wait", action="store_true", help="embed what is pending first (default: search now)"
    )
    search.add_argument("--json", action="store_true", help="print JSON")
    add_archive_argument(search)
    search.set_defaults(func=run_search)


def label_language(given: str | None) -> str:
    """The language of titles: ``--lang``, else the CLI's (``ARXIU_LANG``, the settings, the
    system's: :func:`~app.commands.cli_words.cli_language`), else English."""
    return given or cli_words.label_language()


def run_search(args: argparse.Namespace) -> int:
    """Print the best records (or, with ``--chunks``, passages) for a query, at once from
    what is indexed (``--wait``: after embedding what is pending); how complete the dense
    index is goes to stderr."""
    narrow = RecordFilter((), tuple(args.lang_filter), args.year_from, args.year_to)
    with open_current(args) as archive:
        index = open_index(archive, default_embedders(args.model or archive.meta(MODEL_SETTING)))
        try:
            index.sync_lexical()
            if args.wait:
                bar = ProgressBar(cli_words.words().indexing_bar)
                index.add_progress_listener(lambda p: bar.update(p.done, p.total))
                index.index_now()
                bar.finish()
            stats = index.stats()
            if args.mode != "lexical" and stats.dense_complete < 1.0:
                print(completeness(stats), file=sys.stderr)
            where = search_filter(args, archive)
            if args.chunks:
                chunks = index.search(args.query, k=args.k, mode=args.mode, filter=where)
                return _print_chunks(chunks, args.json)
            found = search_records(
                index, archive, args.query, k=args.k, mode=args.mode, filter=where,
                lang=label_language(args.lang),
            )  # fmt: skip
        finally:
            index.close()
    return _print_records(args, found, narrow)


def search_filter(args: argparse.Namespace, archive: Archive) -> SearchFilter:
    """The search's restrictions: ``--section``, ``--record``, ``--egress``, and ``--within``
    (the record, which must exist, and every record under it; with ``--record`` too, the
    records of both)."""
    records = tuple(RecordKey.parse(r) for r in args.record)
    if args.within:
        top = archive.get_record(RecordKey.parse(args.within)).key  # archive.record_not_found
        records = (*records, *subtree(archive, top))
    return SearchFilter(
        sections=tuple(args.section), records=records, exclude_restricted=args.egress
    )


def _print_records(args: argparse.Namespace, found: list[RecordHit], narrow: RecordFilter) -> int:
    hits = sort_hits(filter_hits(found, narrow), args.sort)
    if args.json:
        print_json([h.to_dict() for h in hits])
        return 0
    print(heading(args.query, hits, len(found)))
    for group in by_section(hits):
        print(f"\n{group.label} ({len(group.hits)})")
        for hit in group.hits:
            print(format_record(hit))
    return 0


def heading(query: str, hits: list[RecordHit], found: int) -> str:
    """``3 records for "…"`` (``2 of 3`` when filtered; ``no records`` when none), in the
    CLI's language."""
    return cli_words.count_heading(query, len(hits), found)


def format_record(hit: RecordHit) -> str:
    """Two to four lines: rank, key, title (and the exact name), then the top of its
    hierarchy (its fonds), date, languages, where the passage is, then the heading it was
    found through (``Subjects: [Chemical] warfare``), then the passage with the query's words
    in brackets."""
    head = f"{hit.rank:>3}. {hit.key}  {hit.title}"
    if hit.exact_name is not None:
        exact = f"  {cli_words.words().exact}"
        head += f"  = {hit.exact_name}" if hit.exact_name != hit.title else exact
    within = cli_words.words().within.format(top=hit.where) if hit.where else None
    details = [d for d in (within, hit.date, "/".join(_tags(hit.langs))) if d]
    passage = hit.passage
    if passage is not None and passage.timecode:
        details.append(f"@{passage.timecode}")
    elif passage is not None and passage.page:
        details.append(f"p.{passage.page}")
    details.append(cli_words.score(hit.score))
    lines = [head, "     " + " · ".join(details)]
    if hit.via is not None:
        heading = _bracketed(hit.via.title, hit.via.title_marks)
        lines.append(f"     {hit.via.field_label}: {heading}")
    if passage is not None:
        lines.append("     " + _bracketed(passage.text, passage.marks)[: PASSAGE_CHARS + 20])
    return "\n".join(lines)


def _tags(langs: tuple[str, ...]) -> list[str]:
    """The record's languages as the app's result rows tag them (``CA``, ``FR``)."""
    return [language_tag(code) for code in langs]


def _bracketed(text: str, marks: tuple[tuple[int, int], ...]) -> str:
    out, position = [], 0
    for start, end in marks:
        if start >= position:
            out.append(f"{text[position:start]}[{text[start:end]}]")
            position = end
    return "".join(out) + text[position:]


def _print_chunks(hits: list[SearchHit], as_json: bool) -> int:
    """The ``--chunks`` listing: every ranked passage, as before records were grouped."""
    if as_json:
        print_json([h.to_dict() for h in hits])
        return 0
    for rank, hit in enumerate(hits, start=1):
        where = f" @{hit.timecode}" if hit.timecode else f" p.{hit.page}" if hit.page else ""
        print(
            f"{rank:>2}. {hit.key} {hit.label} [{hit.field_tipo} {hit.lang}{where}] "
            f"{cli_words.score(hit.score)}\n    {hit.snippet}"
        )
    if not hits:
        print(cli_words.words().no_hits)
    return 0
