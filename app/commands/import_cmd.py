"""``arxiu import KIND PATH``: import a dataset into an archive, with a progress bar and a summary.

Exit codes: 0 when every usable line was imported (bad lines are skipped and listed); 2 when the
file ended early (``import.truncated``: what was read is imported); coded errors such as
``import.file_missing`` exit through :func:`app.cli.main` like every other command.
"""

from __future__ import annotations

import argparse
import sys

from app.commands.common import (
    ProgressBar,
    add_archive_argument,
    open_current,
    print_json,
    shown_archive,
)
from app.core.archive.importers import KINDS, ImportOptions, ImportSummary
from app.core.importing import import_dataset

EXIT_OK = 0
EXIT_TRUNCATED = 2
SKIPS_SHOWN = 20


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import`` command."""
    parser = sub.add_parser(
        "import",
        help="import a dataset (" + ", ".join(KINDS) + ")",
        description="Import a dataset into the archive. Importing the same data again updates "
        "the records instead of creating them twice.",
    )
    parser.add_argument("kind", choices=KINDS, metavar="KIND", help=", ".join(KINDS))
    parser.add_argument(
        "path", metavar="PATH", help="the dataset's folder or file (oai: the base URL)"
    )
    parser.add_argument("--set", dest="set_spec", metavar="S", help="oai: harvest only set S")
    parser.add_argument(
        "--from",
        dest="from_date",
        metavar="DATE",
        help="oai: records changed since DATE (YYYY-MM-DD; default: since the last harvest)",
    )
    parser.add_argument(
        "--metadata-prefix",
        metavar="P",
        help="oai: the metadata format: oai_dc (default), oai_ead or ead (finding aids)",
    )
    parser.add_argument("--mapping", metavar="FILE", help="csv: a JSON column mapping to apply")
    parser.add_argument("--sheet", metavar="NAME", help="csv: the XLSX sheet (default: the first)")
    parser.add_argument("--source", metavar="NAME", help="csv: match records under this source")
    parser.add_argument(
        "--preview",
        action="store_true",
        help="csv: show the mapping and first rows, import nothing",
    )
    add_archive_argument(
        parser,
        "archive folder (created when missing), or postgresql://USER@HOST:PORT/DATABASE (an "
        "empty database is made an archive); default: the demo archive",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import ``args.path`` as ``args.kind`` and print what happened."""
    if args.preview:
        return _preview(args)
    bar = ProgressBar(f"import {args.kind}")
    with open_current(args, create=True) as archive:
        try:
            summary = import_dataset(
                archive, args.kind, args.path, progress=bar.update, options=_options(args)
            )
        finally:
            bar.finish()
    if args.json:
        print_json(summary.to_dict())
    else:
        print("\n".join(summary_lines(summary, shown_archive(archive))))
    if summary.error is None:
        return EXIT_OK
    print(f"error [{summary.error.code}]: {summary.error.message}", file=sys.stderr)
    if summary.error.hint:
        print(f"hint: {summary.error.hint}", file=sys.stderr)
    return EXIT_TRUNCATED


def _options(args: argparse.Namespace) -> ImportOptions:
    return ImportOptions(
        set_spec=args.set_spec,
        from_date=args.from_date,
        metadata_prefix=args.metadata_prefix,
        mapping_file=args.mapping,
        sheet=args.sheet,
        source=args.source,
    )


def _preview(args: argparse.Namespace) -> int:
    """``--preview``: the table's guessed (or saved, or given) mapping and its first rows."""
    from app.core.archive.importers.tabular import preview, preview_lines

    if args.kind != "csv":
        print("error: --preview shows how a table (KIND csv) would import", file=sys.stderr)
        return EXIT_TRUNCATED
    with open_current(args, create=True) as archive:
        shown = preview(args.path, archive=archive, sheet=args.sheet, mapping_file=args.mapping)
    if args.json:
        print_json(shown.to_dict())
    else:
        print("\n".join(preview_lines(shown)))
    return EXIT_OK


def summary_lines(summary: ImportSummary, archive: str) -> list[str]:
    """The summary as lines for a person."""
    lines = [
        f"Imported {summary.kind} from {summary.path}",
        f"  into      {archive} in {summary.seconds:.1f} s",
        f"  records   {summary.records:,} ({summary.created:,} created, "
        f"{summary.updated:,} updated, {summary.unchanged:,} unchanged) "
        f"from {summary.read:,} lines",
    ]
    if summary.deleted:
        lines.append(f"  deleted   {summary.deleted:,} (withdrawn at the source)")
    if summary.sections:
        parts = ", ".join(f"{tipo} {n:,}" for tipo, n in sorted(summary.sections.items()))
        lines.append(f"  sections  {parts}")
    lines.append(f"  links     {summary.links:,}" + _unresolved(summary))
    if summary.media or summary.media_missing:
        lines.append(f"  media     {summary.media:,} attached, {summary.media_missing:,} not found")
    lines.append(f"  skipped   {len(summary.skipped):,}")
    for skip in summary.skipped[:SKIPS_SHOWN]:
        where = f"{skip.file}:{skip.line}" if skip.file else f"line {skip.line}"
        lines.append(f"    {where}: {skip.reason}")
    if len(summary.skipped) > SKIPS_SHOWN:
        lines.append(f"    ... and {len(summary.skipped) - SKIPS_SHOWN:,} more (see --json)")
    return lines


def _unresolved(summary: ImportSummary) -> str:
    if not summary.unresolved:
        return ""
    shown = summary.unresolved_targets.most_common(5)
    more = ", ..." if len(summary.unresolved_targets) > len(shown) else ""
    top = ", ".join(f"{target} x{n}" for target, n in shown)
    return f" ({summary.unresolved:,} unresolved: {top}{more})"
