"""Exporter of any section's records as Dublin Core (``oai_dc``) in an OAI-PMH ``ListRecords``.

OUT is one XML file shaped like an OAI-PMH response (``<OAI-PMH>`` → ``responseDate``,
``request``, ``ListRecords`` → one ``record`` per exported record, each with a ``header``
(``identifier``, ``datestamp``, ``setSpec``) and ``metadata/oai_dc:dc``), so that the Dublin
Core importer (``arxiu import dc OUT``) and any OAI-aware tool read it. When restricted records
are included the file starts with :data:`RESTRICTED_NOTICE` as a comment (before the root, on
the first line, in place of the XML declaration); the notice is not added to the records' own
fields, so that importing the file back gives the same records.

Mapping:

- section ``dc1`` (made by the importer): each field back to its element (``dc2`` and
  ``dc23`` → ``dc:title``… ``dc19`` → ``dc:rights``), the header from ``dc20``/``dc21``/
  ``dc22`` (derived fields ``dc4``, ``dc6``, ``dc11`` are left out: the importer makes them
  again).
- any other section, by each field's kind and labels (:func:`element_for`): the label field →
  ``dc:title``; a relation to ``agent1`` → ``dc:creator`` (the agent's name), to ``subject1`` →
  ``dc:subject``, to ``place1`` → ``dc:coverage``, to another section → ``dc:relation``; a date
  field → ``dc:date``; an IRI → ``dc:identifier``; a text field whose label names a DC element
  (*Creator*/*Autor*, *Date*/*Data*/*Fecha*, *Rights*/*Drets*/*Derechos*…) → that element, any
  other text → ``dc:description``; numbers as ``dc:description`` ``Label: value``. The header
  identifier is ``oai:arxiu:SECTION/ID``, the datestamp the record's last change, the set the
  section. Media fields are left out.

A value's language becomes ``@xml:lang`` unless it is language-neutral or was guessed at import
(then the importer guesses it again from the same text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lxml import etree

from app.core.archive.exporters.base import (
    RESTRICTED_NOTICE,
    ExportRequest,
    ExportSummary,
    selected,
    unwritable,
    writable,
)
from app.core.archive.importers.authorities import AGENTS, PLACES, SUBJECTS
from app.core.archive.importers.dublin_core import DC, ELEMENT_FIELDS, OAI, OAI_DC, SECTION
from app.core.archive.importers.languages import iso_lang
from app.core.archive.model import NEUTRAL_LANG, Field, Record, RecordKey
from app.core.archive.store import now
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

FORMAT = "dc"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
DC_FIELDS = {"dc2": "title", "dc23": "title"} | {
    tipo: element for element, tipo in ELEMENT_FIELDS.items() if tipo != "dc2"
}
"""``dc1`` field → DC element (the importer's crosswalk reversed)."""

LABEL_WORDS: dict[str, tuple[str, ...]] = {
    "title": ("title", "títol", "título", "titre", "name", "nom", "nombre"),
    "creator": ("creator", "author", "autor", "auteur", "artist", "artista", "productor"),
    "subject": ("subject", "subjects", "matèria", "materia", "tema", "temas", "temes", "sujet"),
    "date": ("date", "dates", "data", "fecha", "fechas", "year", "any", "año"),
    "publisher": ("publisher", "editor", "éditeur", "editorial"),
    "contributor": ("contributor", "contributors", "col·laborador", "colaborador"),
    "type": ("type", "tipus", "tipo", "genre", "gènere", "género", "level", "nivell", "nivel"),
    "format": ("format", "formato", "extent", "medium", "dimensions", "mides", "medidas"),
    "identifier": ("identifier", "identificador", "id", "url", "uri", "code", "codi", "código"),
    "source": ("source", "font", "fuente"),
    "language": ("language", "llengua", "idioma", "langue"),
    "relation": ("relation", "relació", "relación"),
    "coverage": ("coverage", "cobertura", "place", "places", "lloc", "llocs", "lugar", "lugares"),
    "rights": ("rights", "drets", "derechos", "droits", "access", "accés", "acceso", "licence"),
}
"""Words of a field's labels (en/ca/es/fr) that name a DC element."""
RELATION_ELEMENTS = {AGENTS: "creator", SUBJECTS: "subject", PLACES: "coverage"}
_WORD = re.compile(r"[\w·]+")


@dataclass(frozen=True)
class DcValue:
    """One DC element of a record: element name, text and archive language ("" when none)."""

    element: str
    text: str
    lang: str = ""


@dataclass(frozen=True)
class Header:
    """An exported record's OAI header."""

    identifier: str
    datestamp: str
    sets: tuple[str, ...]


def export(archive: Archive, request: ExportRequest) -> ExportSummary:
    """Write the selected records of any section as one ``oai_dc`` ``ListRecords`` file.

    Raises:
        ArxiuError: ``export.section_unknown``, ``export.record_unknown``, ``export.unwritable``.
    """
    out = writable(request.out)
    summary = ExportSummary(format=FORMAT, path=str(out))
    root = etree.Element(f"{{{OAI}}}OAI-PMH", nsmap={None: OAI, "xsi": XSI})  # type: ignore[dict-item]
    etree.SubElement(root, f"{{{OAI}}}responseDate").text = now().replace("+00:00", "Z")
    ask = etree.SubElement(root, f"{{{OAI}}}request", verb="ListRecords", metadataPrefix="oai_dc")
    ask.set("set", request.section)
    ask.text = "arxiu:export"
    listing = etree.SubElement(root, f"{{{OAI}}}ListRecords")
    fields = archive.fields(request.section) if archive.has_section(request.section) else []
    for record in selected(archive, request, summary):
        listing.append(record_element(archive, record, fields))
    body = etree.tostring(root, encoding="UTF-8", pretty_print=True)
    if summary.restricted_included:
        head = etree.tostring(etree.Comment(f" {RESTRICTED_NOTICE} ")) + b"\n"
        summary.notes.append(Phrase.of(RESTRICTED_NOTICE))
    else:
        head = b"<?xml version='1.0' encoding='UTF-8'?>\n"
    try:
        out.write_bytes(head + body)
    except OSError as exc:
        raise unwritable(out, exc) from exc
    return summary


def record_element(archive: Archive, record: Record, fields: list[Field]) -> etree._Element:
    """The OAI ``<record>`` (header and ``oai_dc:dc``) of one record."""
    node = etree.Element(f"{{{OAI}}}record")
    header = header_of(record)
    head = etree.SubElement(node, f"{{{OAI}}}header")
    etree.SubElement(head, f"{{{OAI}}}identifier").text = header.identifier
    etree.SubElement(head, f"{{{OAI}}}datestamp").text = header.datestamp
    for spec in header.sets:
        etree.SubElement(head, f"{{{OAI}}}setSpec").text = spec
    metadata = etree.SubElement(node, f"{{{OAI}}}metadata")
    metadata.append(dc_element(dc_values(archive, record, fields)))
    return node


def dc_element(values: list[DcValue]) -> etree._Element:
    """An ``<oai_dc:dc>`` holding ``values`` in order."""
    dc = etree.Element(f"{{{OAI_DC}}}dc", nsmap={"oai_dc": OAI_DC, "dc": DC})
    for value in values:
        item = etree.SubElement(dc, f"{{{DC}}}{value.element}")
        item.text = value.text
        code = iso_lang(value.lang) if value.lang else ""
        if code:
            item.set(XML_LANG, code)
    return dc


def header_of(record: Record) -> Header:
    """The OAI header: ``dc20``/``dc21``/``dc22`` for a ``dc1`` record, else made up."""
    stamp = (record.updated_at or record.created_at or now())[:10]
    if record.section_tipo == SECTION:
        identifier = _texts(record, "dc20")
        datestamp = _texts(record, "dc21")
        return Header(
            identifier[0] if identifier else f"oai:arxiu:{record.key}",
            datestamp[0] if datestamp else stamp,
            tuple(_texts(record, "dc22")),
        )
    return Header(f"oai:arxiu:{record.key}", stamp, (record.section_tipo,))


def _texts(record: Record, tipo: str) -> list[str]:
    return [str(i["value"]) for i in record.items(tipo) if str(i.get("value") or "").strip()]


def _lang(item: dict[str, object]) -> str:
    lang = str(item.get("lang") or NEUTRAL_LANG)
    return "" if lang == NEUTRAL_LANG or item.get("lang_guessed") else lang


def dc_values(archive: Archive, record: Record, fields: list[Field]) -> list[DcValue]:
    """The DC elements of one record of any section (see the module doc), in DC order."""
    if record.section_tipo == SECTION:
        found = [
            DcValue(DC_FIELDS[tipo], str(i["value"]), _lang(i))
            for tipo in DC_FIELDS
            for i in record.items(tipo)
            if str(i.get("value") or "").strip()
        ]
        return found
    label_field = archive.section(record.section_tipo).label_field
    found = []
    for field in fields:
        element = element_for(field, label_field)
        if element is not None:
            found.extend(_field_values(archive, record, field, element))
    order = list(ELEMENT_FIELDS)
    return sorted(found, key=lambda v: order.index(v.element))


def element_for(field: Field, label_field: str | None = None) -> str | None:
    """The DC element a field of a section other than ``dc1`` goes to (``None``: left out)."""
    if field.tipo == label_field:
        return "title"
    if field.kind == "relation":
        if field.target_section == field.section_tipo:
            return "relation"  # agents related to an agent are not its creators
        return RELATION_ELEMENTS.get(field.target_section or "", "relation")
    if field.kind == "date":
        return "date"
    if field.kind == "iri":
        return "identifier"
    if field.kind == "media" or field.kind == "geo":
        return "coverage" if field.kind == "geo" else None
    if field.kind == "number":
        return "description"
    words = {w for label in field.labels.values() for w in _WORD.findall(label.casefold())}
    for element, names in LABEL_WORDS.items():
        if element != "title" and words.intersection(names):
            return element
    return "description"


def _field_values(
    archive: Archive, record: Record, field: Field, element: str
) -> Iterator[DcValue]:
    for item in record.items(field.tipo):
        value = item.get("value")
        if field.kind == "relation" and isinstance(value, dict):
            key = RecordKey(str(value.get("section_tipo")), int(value.get("section_id") or 0))
            if archive.find_record(key) is not None:
                yield DcValue(element, archive.record_label(key))
        elif field.kind == "geo" and isinstance(value, dict):
            yield DcValue(element, f"{value.get('lat')}, {value.get('lon')}")
        elif field.kind == "number" and value is not None:
            yield DcValue(element, f"{field.label()}: {value}")
        elif isinstance(value, str) and value.strip():
            yield DcValue(element, value, _lang(item))
