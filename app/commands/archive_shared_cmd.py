"""``arxiu archive copy|checksum|grant|revoke``: the archive on PostgreSQL (issue 24).

* ``copy SRC DST``: an archive folder into a ``postgresql://`` database, or back into a new
  folder; resumable (run it again after an interruption), refusing a destination that holds
  other data.
* ``checksum ARCHIVE``: one digest per table and one in all, equal for the same archive on
  SQLite and on PostgreSQL.
* ``grant ROLE [--restricted] [--write] --archive postgresql://...``: make an existing login
  role an archivist (``revoke`` takes the rights back; with a flag, only that right).

What they print for a person is in the CLI's language (:mod:`app.commands.cli_words`), its
numbers with the language's separators; table names, URLs, digests and ``--json`` stay as
they are.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TYPE_CHECKING

from app.commands.cli_words import number, words
from app.commands.common import print_json

if TYPE_CHECKING:
    from app.core.archive.postgres.checksum import ArchiveDigest
    from app.core.archive.postgres.transfer import CopyReport


def register_actions(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the shared-archive actions to ``arxiu archive``."""
    copy = commands.add_parser("copy", help="copy an archive between SQLite and PostgreSQL")
    copy.add_argument("source", help="archive folder or postgresql:// URL")
    copy.add_argument("destination", help="new archive folder or postgresql:// URL")
    copy.add_argument("--batch", type=int, default=2000, help="rows per batch (default 2000)")
    copy.add_argument("--json", action="store_true", help="print JSON")
    copy.set_defaults(func=run_copy)
    checksum = commands.add_parser("checksum", help="digests of every table of an archive")
    checksum.add_argument("location", metavar="ARCHIVE", help="archive folder or URL")
    checksum.add_argument("--json", action="store_true", help="print JSON")
    checksum.set_defaults(func=run_checksum)
    for name, text in (
        ("grant", "make a database role an archivist of a PostgreSQL archive"),
        ("revoke", "take an archivist's rights (all, or those named) on a PostgreSQL archive"),
    ):
        action = commands.add_parser(name, help=text)
        action.add_argument("role", help="an existing database role")
        action.add_argument("--restricted", action="store_true", help="the restricted right")
        action.add_argument("--write", action="store_true", help="the write right")
        action.add_argument("--archive", required=True, metavar="URL", help="postgresql:// URL")
        action.set_defaults(func=run_grant if name == "grant" else run_revoke)


def run_copy(args: argparse.Namespace) -> int:
    """Copy an archive and print the rows per table."""
    from app.core.archive.postgres.transfer import copy_archive

    report = copy_archive(args.source, args.destination, batch_rows=max(1, args.batch))
    if args.json:
        print_json(asdict(report))
        return 0
    print("\n".join(copy_lines(report)))
    return 0


def copy_lines(report: CopyReport) -> list[str]:
    """What ``archive copy`` prints for a person: the copy (or its resumption), then each
    table's rows in all and copied by this run."""
    w = words()
    first = w.copy_resumed if report.resumed else w.copied
    lines = [first.format(source=report.source, destination=report.destination)]
    for table, total in report.totals.items():
        copied = number(report.copied[table])
        lines.append(w.copy_row.format(table=table, total=number(total), copied=copied))
    return lines


def run_checksum(args: argparse.Namespace) -> int:
    """Print an archive's digests."""
    from app.core.archive.postgres.checksum import archive_digest

    digest = archive_digest(args.location)
    if args.json:
        print_json(asdict(digest))
        return 0
    print("\n".join(checksum_lines(digest)))
    return 0


def checksum_lines(digest: ArchiveDigest) -> list[str]:
    """What ``archive checksum`` prints for a person: the archive, then a line per table (its
    rows and digest) and the total. The rows are plain digits, as in ``--json``."""
    w = words()
    return [f"{w.archive}  {digest.location}", *digest.lines(w.checksum_all)]


def _rights(args: argparse.Namespace, *, give: bool) -> int:
    from app.core.archive.postgres.connect import connect, database_name
    from app.core.archive.postgres.roles import grant, revoke

    change = grant if give else revoke
    with connect(args.archive, autocommit=True) as conn:
        result = change(
            conn,
            database_name(args.archive),
            args.role,
            restricted=args.restricted,
            write=args.write,
        )
    w = words()
    held = [name for name, on in ((w.users.read, result.reader),
                                  (w.users.restricted, result.restricted),
                                  (w.users.write, result.writer)) if on]  # fmt: skip
    print(f"{result.role}: {', '.join(held) if held else w.no_rights}")
    return 0


def run_grant(args: argparse.Namespace) -> int:
    """Grant archivist rights to a role and print what it holds now."""
    return _rights(args, give=True)


def run_revoke(args: argparse.Namespace) -> int:
    """Revoke archivist rights from a role and print what it holds now."""
    return _rights(args, give=False)
