"""``arxiu archive info``: what an archive holds; ``arxiu archive set KEY VALUE``: its switches.

The one switch so far is ``write_allowed`` (``true``/``false``): whether the assistant may write
in the archive at all. It is off for a new archive, the demo too.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.commands import archive_shared_cmd
from app.commands.cli_words import labels_for, number, said, words
from app.commands.common import add_archive_argument, open_current, print_json, shown_archive
from app.core.archive import Archive
from app.core.archive.migrations import MIGRATIONS
from app.core.archive.write_switch import (
    WRITE_ALLOWED_KEY,
    parse_switch,
    set_writes_allowed,
    writes_allowed,
)
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

SETTABLE = (WRITE_ALLOWED_KEY,)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``archive`` commands."""
    parser = sub.add_parser("archive", help="information about the archive")
    commands = parser.add_subparsers(dest="archive_command", metavar="ACTION", required=True)
    info = commands.add_parser("info", help="sections, counts and schema of the archive")
    info.add_argument("--json", action="store_true", help="print JSON")
    add_archive_argument(info)
    info.set_defaults(func=run_info)
    setter = commands.add_parser("set", help="turn an archive switch on or off")
    setter.add_argument("key", choices=SETTABLE, help="write_allowed: the assistant may write")
    setter.add_argument("value", help="true or false")
    add_archive_argument(setter)
    setter.set_defaults(func=run_set)
    archive_shared_cmd.register_actions(commands)


def archive_info(archive: Archive, lang: str = "lg-eng") -> dict[str, Any]:
    """A summary of the archive: path, schema, sections with counts and flags, each section's
    label in ``lang`` (English for ``--json``, the same in every language; the CLI's language
    for a person: "Artistas de la Tate" in Spanish, as the window says)."""
    sections = [
        {
            "tipo": s.tipo,
            "label": s.label(lang),
            "records": archive.count_records(s.tipo),
            "restricted": s.restricted,
            "writable": s.writable,
        }
        for s in archive.sections()
    ]
    with archive.db.reading() as conn:
        links = int(conn.execute("SELECT count(*) FROM links").fetchone()[0])
        media = int(conn.execute("SELECT count(*) FROM media").fetchone()[0])
    return {
        "path": shown_archive(archive),
        "schema_version": None if archive.shared else archive.sqlite.schema_version(),
        "database": _database(archive),
        "schema_known": len(MIGRATIONS),
        "records": archive.count_records(),
        "links": links,
        "media": media,
        "write_allowed": writes_allowed(archive),
        "sections": sections,
    }


def _database(archive: Archive) -> str | None:
    """A shared archive's database name (``None`` for a folder)."""
    if not archive.shared:
        return None
    from app.core.archive.postgres.connect import database_name

    return database_name(archive.location)


def run_set(args: argparse.Namespace) -> int:
    """Set an archive switch (``write_allowed true|false``) and say what it is now."""
    if args.key != WRITE_ALLOWED_KEY:  # argparse's choices already refuse other keys
        raise ArxiuError(
            "request.invalid", Phrase.of("Unknown key {key!r}.", key=args.key), category="input"
        )
    allowed = parse_switch(args.value)
    with open_current(args) as archive:
        set_writes_allowed(archive, allowed)
        now = writes_allowed(archive)
    w = words()
    print(f"write_allowed = {str(now).lower()} ({w.switched_on if now else w.switched_off})")
    return 0


def run_info(args: argparse.Namespace) -> int:
    """Print the archive summary."""
    with open_current(args) as archive:
        info = archive_info(archive, labels_for(args.json))
    if args.json:
        print_json(info)
        return 0
    w = words()
    width = max(len(w.archive), len(w.schema), len(w.records), len(w.writes)) + 2
    if info["schema_version"] is None:  # a shared archive: the server's schema
        known = w.schema_shared.format(database=info["database"])
    else:
        known = w.schema_known.format(version=info["schema_version"], known=info["schema_known"])
    links = said(w.links_media, links=info["links"], media=info["media"])
    print(f"{w.archive:<{width}}{info['path']}")
    print(f"{w.schema:<{width}}{known}")
    print(f"{w.records:<{width}}{number(info['records'])}   {links}")
    print(f"{w.writes:<{width}}{w.on if info['write_allowed'] else w.off}")
    print()
    for s in info["sections"]:
        flags = " ".join(
            flag
            for flag, on in ((w.restricted, s["restricted"]), (w.writable, s["writable"]))
            if on
        )
        print(f"  {s['tipo']:<14} {number(s['records']):>9}  {s['label']}  {flags}".rstrip())
    return 0
