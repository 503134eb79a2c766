"""A table's hierarchy read as archival descriptions, so that it can be written as EAD3.

An archivist who catalogued in a spreadsheet (AtoM's or ArchivesSpace's CSV template, or columns
of their own with a "part of" column) gets a hierarchical section (``csv1``...). :func:`described`
reads its records as the EAD3 exporter reads ``ead1``'s: each field goes to the ``ead1`` field of
its column's role (the roles the import saved; a section without saved roles: the fields of its
:func:`~app.core.archive.hierarchy.hierarchy_of` shape):

==========================  =====================================================================
role / column               EAD3
==========================  =====================================================================
``title``                   ``unittitle``
``identifier``              ``unitid``
``date``                    ``unitdate``
``date_from``/``date_to``   ``unitdate/@normal`` (``unitdatestructured`` when no date is written)
``level``                   ``@level`` (``Fons``, ``Sèrie``, ``Unitat documental``, ``Serie``…
                            as EAD's codes: :func:`~app.core.archive.vocabulary.level_code`)
``extent``                  ``physdesc``
``description``             ``scopecontent``
``access``                  ``accessrestrict``
``creator``                 ``origination``
``subject``/``place``       ``controlaccess``
``media``                   ``dao``
``parent``                  the nesting (``c`` inside its parent)
a field labelled as one of  that field (``Història arxivística``, ``Contenidor``, ``Ordre``…:
``ead1``'s, in ca/es/en     an Arxiu CSV export of ``ead1``, a person's own headings)
``archivalHistory``…        ``custodhist``, ``arrangement``, ``acqinfo``, ``relatedmaterial``,
                            ``bioghist`` (the text columns AtoM's template and EAD name so,
                            :data:`NOTE_COLUMNS`)
==========================  =====================================================================

A finding aid's ``recordid`` is its top record's reference code (else the key it was imported
under, else ``csv1-7``); a component's ``@id`` is the key its row was imported under (AtoM's
``legacyId``) where that is an XML name. A field with no place in EAD3 (a repository column, a
language column, free text) is not written: :attr:`Described.left_out` names them, and the export
says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.archive.exporters.csv_export import external_ids
from app.core.archive.hierarchy import hierarchy_of, saved_layouts
from app.core.archive.hierarchy_shape import layout_columns
from app.core.archive.importers import ead_fields as crosswalk
from app.core.archive.importers.csv_mapping import compact
from app.core.archive.model import NEUTRAL_LANG, Record, RecordKey
from app.core.archive.records import locators
from app.core.archive.vocabulary import level_code
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

ROLE_FIELDS = {
    "title": crosswalk.TITLE,
    "identifier": crosswalk.UNITID,
    "date": crosswalk.DATES,
    "date_from": crosswalk.FROM,
    "date_to": crosswalk.TO,
    "level": crosswalk.LEVEL,
    "extent": crosswalk.EXTENT,
    "description": crosswalk.NOTES["scopecontent"],
    "access": crosswalk.ACCESS,
    "creator": crosswalk.CREATORS,
    "subject": crosswalk.SUBJECTS_FIELD,
    "place": crosswalk.PLACES_FIELD,
    "media": crosswalk.DAO,
    "parent": crosswalk.PART_OF,
}
"""A column role → the ``ead1`` field the EAD3 exporter writes it from."""

NOTE_COLUMNS = {
    compact(column): crosswalk.NOTES[note]
    for note, columns in {
        "custodhist": ("archivalHistory", "custodhist", "custodial history"),
        "arrangement": ("arrangement", "system of arrangement"),
        "acqinfo": ("immediateSourceOfAcquisitionOrTransfer", "acqinfo", "acquisition"),
        "relatedmaterial": ("relatedUnitsOfDescription", "relatedmaterial"),
        "bioghist": ("bioghist", "biographical history", "administrative history"),
    }.items()
    for column in columns
}
"""Text columns EAD3 has a note for, by their folded header (AtoM's template, EAD's names)."""

UNLABELLED = frozenset({crosswalk.IDENTIFIER, crosswalk.SOURCE_FILE, crosswalk.PART_OF})
"""``ead1`` fields a table's field never stands for by its label alone (the identifier is
made from the keys; the source file and the parent are not a column's text)."""
LABELLED = {
    compact(label): field.tipo
    for field in crosswalk.SCHEMA.fields
    if field.kind != "relation" and field.tipo not in UNLABELLED
    for label in field.labels.values()
}
"""An ``ead1`` field by any of its labels in English, Catalan or Spanish, folded: a table's
text field labelled so (an Arxiu CSV export's ``Història arxivística``, a person's own
``Contenidor``) is written as that field."""


@dataclass(frozen=True)
class Described:
    """A table section's records as ``ead1`` records, and the fields left out of them."""

    records: dict[RecordKey, Record]
    left_out: tuple[str, ...]
    """The labels of the section's fields that EAD3 has no place for."""
    stored: dict[RecordKey, Record]
    """The same records as stored (what the egress gate is asked about)."""


def described(archive: Archive, section: str, lang: str = "lg-eng") -> Described:
    """The records of ``section`` (a hierarchy) as the EAD3 exporter reads ``ead1``'s.

    Raises:
        ArxiuError: ``export.section_unsupported`` when ``section`` is not a hierarchy.
    """
    shape = hierarchy_of(archive, section)
    if shape is None:
        raise ArxiuError(
            "export.section_unsupported",
            Phrase.of(
                'EAD3 export writes archival descriptions: {section!r} has no "part of" '
                "field, so it is not a hierarchy of fonds, series, files and items.",
                section=section,
            ),
            hint="Export other sections as csv, json or dc.",
            category="input",
        )
    targets = _field_targets(archive, section)
    for role, tipo in (
        ("parent", shape.parent_field),
        ("title", shape.label_field),
        ("identifier", shape.reference_field),
        ("level", shape.level_field),
    ):
        if tipo and tipo not in targets and ROLE_FIELDS[role] not in targets.values():
            targets[tipo] = ROLE_FIELDS[role]
    if shape.order_field:
        targets.setdefault(shape.order_field, crosswalk.ORDER)
    taken = set(targets.values())
    for field in archive.fields(section):
        if field.tipo in targets or field.kind == "relation":
            continue
        named = {LABELLED.get(compact(label)) for label in field.labels.values()} - {None}
        if len(named) == 1 and (tipo := named.pop()) and tipo not in taken:
            targets[field.tipo] = tipo
            taken.add(tipo)
    keys = external_ids(archive, section)
    records: dict[RecordKey, Record] = {}
    stored: dict[RecordKey, Record] = {}
    filled: set[str] = set()
    for record in archive.iter_records(section):
        stored[record.key] = record
        filled.update(tipo for tipo, items in record.values.items() if items)
        values = _values(record, targets)
        values[crosswalk.IDENTIFIER] = [
            {"lang": NEUTRAL_LANG, "value": keys.get(record.section_id, str(record.key))}
        ]
        records[record.key] = Record(
            record.section_tipo, record.section_id, values, record.version, record.restricted
        )
    _name_finding_aids(records)
    fields = {f.tipo: f for f in archive.fields(section)}
    left_out = tuple(fields[t].label(lang) for t in fields if t in filled and t not in targets)
    return Described(records, left_out, stored)


def _field_targets(archive: Archive, section: str) -> dict[str, str]:
    """``field tipo → ead1 field`` from the column roles the section's imports saved."""
    targets: dict[str, str] = {}
    for column, role, tipo in layout_columns(saved_layouts(archive), section):
        target = ROLE_FIELDS.get(role) or (
            NOTE_COLUMNS.get(compact(column)) if role == "text" else None
        )
        if target is not None:
            targets.setdefault(tipo, target)
    return targets


def _values(record: Record, targets: dict[str, str]) -> dict[str, list[dict[str, object]]]:
    """The record's values under their ``ead1`` fields; a level as EAD's code."""
    values: dict[str, list[dict[str, object]]] = {}
    for tipo, target in targets.items():
        for item in record.items(tipo):
            if target == crosswalk.LEVEL:
                written = str(item.get("value") or "")
                item = {**item, "value": level_code(written) or written}
            elif target == crosswalk.ORDER:
                item = {**item, "value": _number(item.get("value"))}
            values.setdefault(target, []).append(dict(item))
    return values


def _number(value: object) -> object:
    """A position written as text in a table (``"3"``) as the number ``ead1`` keeps."""
    if isinstance(value, str):
        try:
            return float(value) if "." in value else int(value)
        except ValueError:
            return value
    return value


def _name_finding_aids(records: dict[RecordKey, Record]) -> None:
    """A component's identifier is ``TOP#KEY`` (``@id`` = its key), a top record's its
    reference code (the finding aid's ``recordid``), else the key it was imported under."""
    parents = {
        key: next((k for k in _parents(record) if k in records), None)
        for key, record in records.items()
    }
    own = {key: _texts(record, crosswalk.IDENTIFIER)[0] for key, record in records.items()}
    for key, record in records.items():
        top, seen = key, {key}
        while (up := parents.get(top)) is not None and up not in seen:
            seen.add(up)
            top = up
        eadid = next(iter(_texts(records[top], crosswalk.UNITID)), "") or own[top]
        record.values[crosswalk.IDENTIFIER] = [
            {"lang": NEUTRAL_LANG, "value": eadid if key == top else f"{eadid}#{own[key]}"}
        ]


def _parents(record: Record) -> list[RecordKey]:
    return locators(record.items(crosswalk.PART_OF))


def _texts(record: Record, tipo: str) -> list[str]:
    return [str(i.get("value")) for i in record.items(tipo) if i.get("value") not in (None, "")]
