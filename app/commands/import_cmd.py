"""``arxiu import KIND PATH``: import a dataset into an archive, with a progress bar and a summary.

Exit codes: 0 when every usable line was imported (bad lines are skipped and listed); 2 when the
file ended early (``import.truncated``: what was read is imported); coded errors such as
``import.file_missing`` exit through :func:`app.cli.main` like every other command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from app.commands import cli_words
from app.commands.common import (
    ProgressBar,
    add_archive_argument,
    open_current,
    print_json,
    shown_archive,
)
from app.core.archive.importers import (
    DATASET_KINDS,
    KINDS,
    STANDARD_KINDS,
    ImportOptions,
    ImportSummary,
)
from app.core.archive.importers.base import ReadUnit
from app.core.counted import Counted
from app.core.import_report import skip_place, skip_reason
from app.core.importing import import_dataset

EXIT_OK = 0
EXIT_TRUNCATED = 2
SKIPS_SHOWN = 20
STANDARDS_LISTED = ", ".join(STANDARD_KINDS)
DATASETS_LISTED = ", ".join(DATASET_KINDS)
IMPORT_HELP = f"import records ({STANDARDS_LISTED}; test datasets: {DATASETS_LISTED})"
"""The command's line in ``arxiu --help``: the archivist's formats, then the public datasets."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import`` command."""
    parser = sub.add_parser(
        "import",
        help=IMPORT_HELP,
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
    bar = ProgressBar(cli_words.words().import_bar.format(kind=args.kind))
    with open_current(args, create=True) as archive:
        try:
            summary = import_dataset(
                archive, args.kind, args.path, progress=bar.update, options=_options(args)
            )
        finally:
            bar.finish()
        lang = cli_words.label_language()
        names = {s.tipo: s.label(lang) for s in archive.sections() if s.tipo in summary.sections}
    if args.json:
        print_json(summary.to_dict())
    else:
        print("\n".join(summary_lines(summary, shown_archive(archive), names)))
    if summary.error is None:
        return EXIT_OK
    print("\n".join(cli_words.error_lines(summary.error)), file=sys.stderr)
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
        print(cli_words.words().preview_tables_only, file=sys.stderr)
        return EXIT_TRUNCATED
    with open_current(args, create=True) as archive:
        shown = preview(args.path, archive=archive, sheet=args.sheet, mapping_file=args.mapping)
    if args.json:
        print_json(shown.to_dict())
    else:
        print("\n".join(preview_lines(shown)))
    return EXIT_OK


def _read_words(words: cli_words.CliWords, unit: ReadUnit) -> Counted:
    """How the summary says what the import read: lines, rows, records or files."""
    return {
        "lines": words.import_read,
        "rows": words.import_read_rows,
        "records": words.import_read_records,
        "files": words.import_read_files,
    }[unit]


def summary_lines(
    summary: ImportSummary, archive: str, section_names: Mapping[str, str] | None = None
) -> list[str]:
    """The summary as lines for a person, in the CLI's language (``ARXIU_LANG``...): the
    counts, then each skip's file and line with its reason (:func:`skip_reason`).

    ``section_names`` maps a section's tipo to its name in that language: the sections line
    names each as ``archive info`` does, with the tipo ``--section`` takes after it.
    """
    w, n, c, table = cli_words.words(), cli_words.number, cli_words.counted, cli_words.table()
    lines = [
        w.imported.format(kind=summary.kind, path=summary.path),
        w.import_into.format(archive=archive, seconds=cli_words.seconds(summary.seconds)),
        w.import_records.format(
            records=n(summary.records),
            created=c(w.import_created, summary.created),
            updated=c(w.import_updated, summary.updated),
            unchanged=c(w.import_unchanged, summary.unchanged),
            read=c(_read_words(w, summary.read_unit), summary.read),
        ),
    ]
    if summary.named:
        lines.append(c(w.import_named, summary.named))
    if summary.deleted:
        lines.append(c(w.import_deleted, summary.deleted))
    if summary.sections:
        names = section_names or {}
        parts = ", ".join(
            f"{_named(names.get(tipo), tipo)} {n(count)}"
            for tipo, count in sorted(summary.sections.items())
        )
        lines.append(w.import_sections.format(sections=parts))
    lines.append(w.import_links.format(links=n(summary.links), unresolved=_unresolved(summary)))
    if summary.media or summary.media_missing:
        lines.append(
            w.import_media.format(
                media=c(w.import_attached, summary.media),
                missing=c(w.import_missing, summary.media_missing),
            )
        )
    if summary.media_linked:
        lines.append(c(w.import_linked, summary.media_linked))
    lines.append(w.import_skipped.format(count=n(len(summary.skipped))))
    for skip in summary.skipped[:SKIPS_SHOWN]:
        where = (
            skip_place(skip.file, skip.line) if skip.file else w.import_line.format(line=skip.line)
        )
        lines.append(f"    {where}: {skip_reason(skip, table)}")
    if len(summary.skipped) > SKIPS_SHOWN:
        lines.append(w.import_more.format(count=n(len(summary.skipped) - SKIPS_SHOWN)))
    return lines


def _named(name: str | None, tipo: str) -> str:
    """A section as the summary names it: ``Persones, famílies i entitats [agent1]`` (the tipo
    in brackets, as ``records show`` gives a field's)."""
    return f"{name} [{tipo}]" if name and name != tipo else tipo


def _unresolved(summary: ImportSummary) -> str:
    if not summary.unresolved:
        return ""
    shown = summary.unresolved_targets.most_common(5)
    more = ", ..." if len(summary.unresolved_targets) > len(shown) else ""
    top = ", ".join(f"{target} x{count}" for target, count in shown)
    return cli_words.words().import_unresolved.format(
        count=cli_words.number(summary.unresolved), top=top, more=more
    )
