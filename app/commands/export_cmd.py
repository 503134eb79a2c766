"""``arxiu export FORMAT --section S [--record K] OUT``: records out as an archival standard.

Restricted records are left out unless ``--include-restricted`` is given; then the export says
so on its first line or element. Formats: see :mod:`app.core.archive.exporters`. What was
written is said in the CLI's language (:mod:`app.commands.cli_words`); ``--json`` is the same
in every language.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.commands import cli_words
from app.commands.common import add_archive_argument, open_current, print_json
from app.core.archive.exporters import FORMATS, ExportRequest, ExportSummary, run_export
from app.core.archive.model import RecordKey


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export`` command."""
    parser = sub.add_parser(
        "export",
        help="export a section or a subtree (" + ", ".join(FORMATS) + ")",
        description="Export a section, or one record with everything under it, as an archival "
        "standard. Restricted records are left out unless --include-restricted is given.",
    )
    parser.add_argument("format", choices=FORMATS, metavar="FORMAT", help=", ".join(FORMATS))
    parser.add_argument("out", metavar="OUT", help="the file to write")
    parser.add_argument("--section", required=True, metavar="S", help="the section to export")
    parser.add_argument(
        "--record", metavar="K", help="one record (its id, or SECTION/ID) and what is under it"
    )
    parser.add_argument(
        "--include-restricted",
        action="store_true",
        help="include restricted records (the export then says so at its top)",
    )
    parser.add_argument(
        "--lang", help="language of headings (lg-cat, …; default: the UI's, from ARXIU_LANG)"
    )
    add_archive_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


def record_key(section: str, text: str | None) -> RecordKey | None:
    """``--record`` as a key: ``12`` or ``ead1/12`` (raises ValueError on anything else)."""
    if text is None:
        return None
    if text.strip().isdigit():
        return RecordKey(section, int(text))
    return RecordKey.parse(text)


def run(args: argparse.Namespace) -> int:
    """Export and print what was written."""
    request = ExportRequest(
        section=args.section,
        out=Path(args.out),
        record=record_key(args.section, args.record),
        include_restricted=args.include_restricted,
        lang=args.lang or cli_words.label_language(),
    )
    with open_current(args) as archive:
        summary = run_export(archive, args.format, request)
    if args.json:
        print_json(summary.to_dict())
        return 0
    print("\n".join(summary_lines(summary)))
    return 0


def summary_lines(summary: ExportSummary) -> list[str]:
    """What an export wrote, in the CLI's language (:mod:`app.commands.cli_words`): the records
    and where, the restricted records left out or included, and the exporter's notes."""
    w = cli_words.words()
    lines = [
        cli_words.counted(w.exported, summary.records, format=summary.format, path=summary.path)
    ]
    if summary.restricted_left_out:
        lines.append(cli_words.counted(w.export_left_out, summary.restricted_left_out))
    if summary.restricted_included:
        lines.append(cli_words.counted(w.export_included, summary.restricted_included))
    table = cli_words.table()
    lines += [f"  {note.said_in(table)}" for note in summary.notes]
    return lines
