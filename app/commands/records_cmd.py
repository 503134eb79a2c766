"""``arxiu records list|show``: browse records from the terminal."""

from __future__ import annotations

import argparse
from typing import Any

from app.commands.cli_words import counted, labels_for, table, words
from app.commands.common import add_archive_argument, open_current, print_json
from app.core.archive import Archive, Record, RecordKey
from app.core.archive.hierarchy import Node, children_of, hierarchy_of
from app.core.archive.hierarchy_shape import Hierarchy
from app.core.archive.model import NEUTRAL_LANG
from app.core.archive.records import locators
from app.core.archive.shown_values import (
    by_language,
    language_tag,
    shown_value,
    shows_language,
    table_name_of,
)
from app.core.archive.vocabulary import LEVELS, field_terms, said


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``records`` commands."""
    parser = sub.add_parser("records", help="list and show records")
    commands = parser.add_subparsers(dest="records_command", metavar="ACTION", required=True)
    listing = commands.add_parser("list", help="list a section's records")
    listing.add_argument("section", metavar="SECTION")
    listing.add_argument("--offset", type=int, default=0)
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_archive_argument(listing)
    listing.set_defaults(func=run_list)
    show = commands.add_parser("show", help="show one record with its links")
    show.add_argument("section", metavar="SECTION")
    show.add_argument("id", metavar="ID", type=int)
    show.add_argument(
        "--lang",
        help="preferred language (lg-cat, lg-spa...; default: the CLI's, from ARXIU_LANG)",
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    add_archive_argument(show)
    show.set_defaults(func=run_show)


def run_list(args: argparse.Namespace) -> int:
    """Print a page of a section's records."""
    with open_current(args) as archive:
        section = archive.section(args.section)
        total = archive.count_records(section.tipo)
        records = archive.list_records(section.tipo, offset=args.offset, limit=args.limit)
        lang = labels_for(args.json)
        rows = [
            {
                "section_tipo": r.section_tipo,
                "section_id": r.section_id,
                "label": archive.label_of(r, lang),
            }
            for r in records
        ]
    if args.json:
        print_json(
            {"section": section.tipo, "total": total, "offset": args.offset, "records": rows}
        )
        return 0
    w = words()
    print(counted(w.section_records, total, label=section.label(lang), tipo=section.tipo))
    for row in rows:
        print(f"  {row['section_id']:>6}  {row['label']}")
    if args.offset + len(rows) < total:
        print("  " + w.more.format(count=total - args.offset - len(rows)))
    return 0


def record_view(archive: Archive, record: Record, lang: str) -> dict[str, Any]:
    """A record with field labels, values and both directions of links."""
    fields = []
    for field in archive.fields(record.section_tipo):
        items = record.items(field.tipo)
        if not items:
            continue
        values: list[Any] = []
        for item in items:
            if field.kind == "relation":
                for key in locators([item]):
                    values.append({"record": str(key), "label": archive.record_label(key, lang)})
            else:
                values.append({"lang": item["lang"], "value": item["value"]})
        fields.append(
            {"tipo": field.tipo, "label": field.label(lang), "kind": field.kind, "values": values}
        )
    key = record.key
    return {
        "section_tipo": key.section_tipo,
        "section_id": key.section_id,
        "label": archive.label_of(record, lang),
        "version": record.version,
        "restricted": archive.is_restricted(key),
        "fields": fields,
        "linked_from": [
            {
                "record": str(link.source),
                "field": link.field_tipo,
                "label": archive.record_label(link.source, lang),
            }
            for link in archive.links_to(key)
        ],
    }


def run_show(args: argparse.Namespace) -> int:
    """Print one record: JSON with ``--json``, else in words (:func:`shown_lines`)."""
    with open_current(args) as archive:
        record = archive.get_record(RecordKey(args.section, args.id))
        lang = args.lang or labels_for(args.json)
        view = record_view(archive, record, lang)
        lines = [] if args.json else shown_lines(archive, record, view, lang)
    if args.json:
        print_json(view)
        return 0
    print("\n".join(lines))
    return 0


def shown_lines(archive: Archive, record: Record, view: dict[str, Any], lang: str) -> list[str]:
    """The record as a person reads it, as the record view shows it: a value's language as a
    short tag where its field holds one value per language (none for a language-neutral
    value), a level of description or an entity type as its term in ``lang``, a language code
    as the language's name, a point in degrees; a link back named by its field's label."""
    w = words()
    name_of = table_name_of(table())
    shape = hierarchy_of(archive, record.section_tipo)
    terms = field_terms(record.section_tipo, shape)
    fields = {field.tipo: field for field in archive.fields(record.section_tipo)}
    flag = f"  [{w.restricted}]" if view["restricted"] else ""
    key = f"{view['section_tipo']}/{view['section_id']}"
    lines = [f"{view['label']} ({key}) v{view['version']}{flag}"]
    for shown in view["fields"]:
        field = fields[shown["tipo"]]
        lines.append(f"\n{shown['label']} [{shown['tipo']}]")
        for value in shown["values"] if field.kind == "relation" else by_language(shown["values"]):
            if "record" in value:
                lines.append(f"  → {value['label']} ({value['record']})")
                continue
            codes = terms.get(field.tipo)
            text = shown_value(field.kind, value["value"], codes, lang, name_of)
            code = str(value["lang"] or NEUTRAL_LANG)
            tagged = shows_language(field.multilingual, code, value["value"], codes)
            text = text.replace("\n", "\n" + " " * (6 if tagged else 2))  # a transcript's lines
            lines.append(f"  {language_tag(code)}  {text}" if tagged else f"  {text}")
    below = children_of(archive, record.key, lang, shape) if shape else []
    if below:
        lines.append(f"\n{w.contents} ({len(below)})")
        lines += [f"  {n}. {_child(node, lang)}" for n, node in enumerate(below, 1)]
    others = [link for link in view["linked_from"] if not _is_child(link, shape)]
    if others:
        lines.append(f"\n{w.linked_from}")
        labels: dict[str, dict[str, str]] = {}  # section → field tipo → label, read once
        for link in others:
            tipo = link["record"].split("/", 1)[0]
            if tipo not in labels:
                labels[tipo] = {f.tipo: f.label(lang) for f in archive.fields(tipo)}
            via = labels[tipo].get(link["field"], link["field"])
            lines.append(f"  ← {link['label']} ({link['record']}) {w.via} {via}")
    return lines


def _child(node: Node, lang: str) -> str:
    """A unit under the record shown, as the record view lists it: its code and title, its
    level in ``lang``, its dates and box (what tells apart siblings with one title), its key."""
    facts = [f"{node.reference} {node.label}" if node.reference else node.label]
    facts += [said(node.level, LEVELS, lang) if node.level else "", node.dates, node.container]
    return " · ".join(fact for fact in facts if fact) + f" ({node.key})"


def _is_child(link: dict[str, str], shape: Hierarchy | None) -> bool:
    """Whether ``link`` is a child's "part of" (listed under the contents, not again)."""
    return (
        shape is not None
        and link["field"] == shape.parent_field
        and link["record"].split("/", 1)[0] == shape.section
    )
