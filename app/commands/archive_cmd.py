"""``arxiu archive info``: what an archive holds."""

from __future__ import annotations

import argparse
from typing import Any

from app.commands.common import open_current, print_json
from app.core.archive import Archive
from app.core.archive.migrations import MIGRATIONS


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``archive`` commands."""
    parser = sub.add_parser("archive", help="information about the archive")
    commands = parser.add_subparsers(dest="archive_command", metavar="ACTION", required=True)
    info = commands.add_parser("info", help="sections, counts and schema of the archive")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.add_argument("--archive", default=argparse.SUPPRESS, help="archive folder")
    info.set_defaults(func=run_info)


def archive_info(archive: Archive) -> dict[str, Any]:
    """A summary of the archive: path, schema, sections with counts and flags."""
    sections = [
        {
            "tipo": s.tipo,
            "label": s.label(),
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
        "path": str(archive.folder),
        "schema_version": archive.db.schema_version(),
        "schema_known": len(MIGRATIONS),
        "records": archive.count_records(),
        "links": links,
        "media": media,
        "sections": sections,
    }


def run_info(args: argparse.Namespace) -> int:
    """Print the archive summary."""
    with open_current(args) as archive:
        info = archive_info(archive)
    if args.json:
        print_json(info)
        return 0
    print(f"Archive  {info['path']}")
    print(f"Schema   {info['schema_version']} (this Arxiu knows {info['schema_known']})")
    print(f"Records  {info['records']:,}   links {info['links']:,}   media {info['media']:,}")
    print()
    for s in info["sections"]:
        flags = " ".join(
            flag
            for flag, on in (("restricted", s["restricted"]), ("writable", s["writable"]))
            if on
        )
        print(f"  {s['tipo']:<14} {s['records']:>9,}  {s['label']}  {flags}".rstrip())
    return 0
