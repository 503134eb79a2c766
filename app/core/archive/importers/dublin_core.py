"""Importer of Dublin Core records (``oai_dc``) into the section ``dc1``.

PATH is an ``oai_dc`` XML file, a folder of them, an OAI-PMH ``ListRecords``/``GetRecord``
response saved to a file, or an OAI *static repository* (``<Repository>``): every
``oai:record`` is read (its ``header`` and its ``metadata/oai_dc:dc``), and where a file has no
``oai:record`` every ``oai_dc:dc`` is. Source ``dc``, external id = the OAI header
``identifier``, else the first ``dc:identifier``. The OAI-PMH harvester builds its records with
:func:`dc_record` (one ``oai:record`` or ``oai_dc:dc`` element → a :class:`~.base.Built`).

Section ``dc1`` "Digital objects (Dublin Core)" (label ``dc2``), crosswalk
(``docs/importing.md``, "Dublin Core"):

=======  =======================  =====================================================
tipo     from                     value
=======  =======================  =====================================================
dc2      ``dc:title``             the first title in each language (multilingual): the label
dc3      ``dc:creator``           the names as written
dc4      ``dc:creator``           → ``agent1`` (one authority per name, created if missing)
dc5      ``dc:subject``           the terms as written (multilingual)
dc6      ``dc:subject``           → ``subject1``
dc7      ``dc:description``       multilingual
dc8      ``dc:publisher``
dc9      ``dc:contributor``
dc10     ``dc:date``              as written (``1997 August 23``)
dc11     ``dc:date``              ISO 8601 when it can be read (``1997-08-23``,
                                  ``1943/1983``), type date
dc12     ``dc:type``
dc13     ``dc:format``
dc14     ``dc:identifier``        every identifier (local ids, URLs)
dc15     ``dc:source``
dc16     ``dc:language``
dc17     ``dc:relation``
dc18     ``dc:coverage``          multilingual
dc19     ``dc:rights``            multilingual; one that closes the material makes the record
                                  restricted (:func:`rights_close`)
dc20     OAI ``identifier``       the header's identifier
dc21     OAI ``datestamp``        type date
dc22     OAI ``setSpec``          every set
dc23     ``dc:title``             the other titles, in order (multilingual; in the Caltech
                                  files the collection, series and subseries)
=======  =======================  =====================================================

``dcterms`` refinements go to their element's field (``alternative`` → title, ``abstract`` →
description, ``created``/``issued`` → date, ``accessRights``/``license`` → rights, ``spatial``
→ coverage, ``isPartOf``… → relation). Languages: ``@xml:lang``; else a record's single
``dc:language`` code; else the language guessed from the record's text
(:func:`~app.core.archive.language.guess_import_lang`, marked ``lang_guessed``). A record whose
header says ``status="deleted"`` is not imported: it is reported as a skip
(``import.deleted_record``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.access import closes_access
from app.core.archive.importers.authorities import (
    AGENTS,
    SUBJECTS,
    Mention,
    ensure_authorities,
)
from app.core.archive.importers.base import (
    DUPLICATE,
    Built,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    Values,
    ensure_schema,
    put,
    report_file,
    schema_field,
    section_schema,
)
from app.core.archive.importers.dates import iso_date
from app.core.archive.importers.eac_cpf import line_of
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.reading import BadRow
from app.core.archive.importers.safe_xml import Element, child, children, local, text_of, xml_lang
from app.core.archive.importers.xml_input import read_xml, xml_files
from app.core.archive.language import guess_import_lang
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

KIND = "dc"
SOURCE = "dc"
SECTION = "dc1"
OAI = "http://www.openarchives.org/OAI/2.0/"
OAI_DC = "http://www.openarchives.org/OAI/2.0/oai_dc/"
DC = "http://purl.org/dc/elements/1.1/"
DCTERMS = "http://purl.org/dc/terms/"
DC_NAMESPACES = frozenset({DC, DCTERMS})

NOT_DC = "import.not_dublin_core"
"""A well-formed XML file holding neither ``oai:record`` nor ``oai_dc:dc`` elements."""
MISSING_ID = "import.missing_id"
"""A record with neither an OAI identifier nor a ``dc:identifier``."""
DELETED = "import.deleted_record"
"""A record its repository marks deleted (``header/@status="deleted"``): not imported."""

ELEMENT_FIELDS = {
    "title": "dc2",
    "creator": "dc3",
    "subject": "dc5",
    "description": "dc7",
    "publisher": "dc8",
    "contributor": "dc9",
    "date": "dc10",
    "type": "dc12",
    "format": "dc13",
    "identifier": "dc14",
    "source": "dc15",
    "language": "dc16",
    "relation": "dc17",
    "coverage": "dc18",
    "rights": "dc19",
}
"""The 15 DC elements → their field."""
REFINEMENTS = {
    "alternative": "title",
    "abstract": "description",
    "tableOfContents": "description",
    "created": "date",
    "issued": "date",
    "modified": "date",
    "available": "date",
    "dateAccepted": "date",
    "dateCopyrighted": "date",
    "valid": "date",
    "extent": "format",
    "medium": "format",
    "bibliographicCitation": "identifier",
    "accessRights": "rights",
    "license": "rights",
    "rightsHolder": "rights",
    "spatial": "coverage",
    "temporal": "coverage",
    "isPartOf": "relation",
    "hasPart": "relation",
    "isVersionOf": "relation",
    "hasVersion": "relation",
    "isFormatOf": "relation",
    "hasFormat": "relation",
    "references": "relation",
    "isReferencedBy": "relation",
    "requires": "relation",
    "isRequiredBy": "relation",
    "replaces": "relation",
    "isReplacedBy": "relation",
    "conformsTo": "relation",
}
"""``dcterms`` refinements → the DC element whose field holds them."""
TEXT_FIELDS = frozenset({"dc2", "dc5", "dc7", "dc12", "dc18", "dc19", "dc23"})
"""Fields whose values are prose in a language (the others are names, codes and dates)."""
LANG_CODE = re.compile(r"^[a-zA-Z]{2,3}(?:[-_][a-zA-Z0-9]+)?$")

_f = functools.partial(schema_field, SECTION)

SCHEMA = section_schema(
    SECTION,
    (
        "Digital objects (Dublin Core)",
        "Objectes digitals (Dublin Core)",
        "Objetos digitales (Dublin Core)",
    ),
    "Records imported from Dublin Core (oai_dc) files and OAI-PMH repositories.",
    label_field="dc2",
    fields=(
        _f("dc2", ("Title", "Títol", "Título"), multilingual=True),
        _f("dc3", ("Creator", "Autor", "Autor")),
        _f(
            "dc4",
            ("Creator (authority)", "Autor (autoritat)", "Autor (autoridad)"),
            "relation",
            target_section=AGENTS,
        ),
        _f("dc5", ("Subject", "Matèria", "Materia"), multilingual=True),
        _f(
            "dc6",
            ("Subject (authority)", "Matèria (autoritat)", "Materia (autoridad)"),
            "relation",
            target_section=SUBJECTS,
        ),
        _f("dc7", ("Description", "Descripció", "Descripción"), multilingual=True),
        _f("dc8", ("Publisher", "Editor", "Editor")),
        _f("dc9", ("Contributor", "Col·laborador", "Colaborador")),
        _f("dc10", ("Date", "Data", "Fecha")),
        _f("dc11", ("Date (ISO)", "Data (ISO)", "Fecha (ISO)"), "date"),
        _f("dc12", ("Type", "Tipus", "Tipo"), multilingual=True),
        _f("dc13", ("Format", "Format", "Formato")),
        _f("dc14", ("Identifier", "Identificador", "Identificador")),
        _f("dc15", ("Source", "Font", "Fuente")),
        _f("dc16", ("Language", "Llengua", "Idioma")),
        _f("dc17", ("Relation", "Relació", "Relación")),
        _f("dc18", ("Coverage", "Cobertura", "Cobertura"), multilingual=True),
        _f("dc19", ("Rights", "Drets", "Derechos"), multilingual=True),
        _f("dc20", ("OAI identifier", "Identificador OAI", "Identificador OAI")),
        _f("dc21", ("OAI datestamp", "Data OAI", "Fecha OAI"), "date"),
        _f("dc22", ("OAI sets", "Conjunts OAI", "Conjuntos OAI")),
        _f("dc23", ("Other titles", "Altres títols", "Otros títulos"), multilingual=True),
    ),
)


def ensure_dc_schema(archive: Archive) -> None:
    """Create the ``dc1`` section and its fields where missing."""
    ensure_schema(archive, SCHEMA)


@dataclass(frozen=True)
class Header:
    """An OAI record header (empty when the record came without one)."""

    identifier: str = ""
    datestamp: str = ""
    deleted: bool = False
    sets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Item:
    """One DC element's value: its element name, text and ``xml:lang`` (as the archive's code)."""

    element: str
    text: str
    lang: str = ""


def import_dublin_core(
    archive: Archive, path: Path, progress: ProgressFn | None = None
) -> ImportSummary:
    """Import the ``oai_dc`` file(s) at ``path`` into ``dc1`` (see the module doc)."""
    files = xml_files(Path(path), "an oai_dc XML")
    summary = ImportSummary(kind=KIND, path=str(path), read_unit="records")
    ensure_dc_schema(archive)
    run = ImportRun(archive, summary, SOURCE)
    seen: dict[str, str] = {}
    for number, file in enumerate(files, start=1):
        report_file(progress, file.name)
        root = read_xml(file, summary)
        if root is not None:
            _import_root(archive, run, root, file.name, seen)
        if progress is not None:
            progress(number, len(files))
    run.flush()
    return summary


def _import_root(
    archive: Archive, run: ImportRun, root: Element, file: str, seen: dict[str, str]
) -> None:
    """Every record of one parsed file, through :func:`dc_page`."""
    elements = record_elements(root)
    if not elements:
        reason = "no oai:record or oai_dc:dc element (the root is <{root}>)"
        run.summary.skipped.append(Skip.said(line_of(root), file, NOT_DC, reason, root=local(root)))
        return
    for element, built in zip(elements, dc_page(archive, elements, run.summary), strict=True):
        line = line_of(element)
        run.summary.read += 1
        if isinstance(built, Skip):
            run.summary.skipped.append(Skip(line, built.reason, file, built.code, built.phrase))
            continue
        external_id = built.record.external_id or ""
        if external_id in seen:
            reason = "duplicate identifier {id!r} (first in {first})"
            skip = Skip.said(line, file, DUPLICATE, reason, id=external_id, first=seen[external_id])
            run.summary.skipped.append(skip)
            continue
        seen[external_id] = file
        run.add(built, line, file)


def record_elements(root: Element) -> list[Element]:
    """The ``oai:record`` elements under ``root``, else its ``oai_dc:dc`` elements (or itself)."""
    records = list(root.iter(f"{{{OAI}}}record"))
    if records:
        return records
    return list(root.iter(f"{{{OAI_DC}}}dc"))


def header_of(element: Element) -> Header:
    """The OAI header of an ``oai:record`` (or of the record around an ``oai_dc:dc``)."""
    record = _record_of(element)
    header = child(record, "header") if record is not None else None
    if header is None:
        return Header()
    return Header(
        identifier=text_of(child(header, "identifier")),
        datestamp=text_of(child(header, "datestamp")),
        deleted=header.get("status", "").strip() == "deleted",
        sets=tuple(t for s in children(header, "setSpec") if (t := text_of(s))),
    )


def _record_of(element: Element) -> Element | None:
    node: Element | None = element
    while node is not None:
        if node.tag == f"{{{OAI}}}record":
            return node
        node = node.getparent()
    return None


def dc_of(element: Element) -> Element | None:
    """The ``oai_dc:dc`` of an ``oai:record`` (``element`` itself when it is one)."""
    if element.tag == f"{{{OAI_DC}}}dc":
        return element
    return next(element.iter(f"{{{OAI_DC}}}dc"), None)


def dc_items(dc: Element) -> list[Item]:
    """The DC elements of ``dc`` in order (refinements as their element), empty ones left out."""
    items: list[Item] = []
    for node in children(dc):
        namespace = str(node.tag).partition("}")[0].lstrip("{")
        if namespace not in DC_NAMESPACES:
            continue
        name = local(node)
        name = REFINEMENTS.get(name, name)
        text = text_of(node)
        if name in ELEMENT_FIELDS and text:
            code = xml_lang(node)
            items.append(Item(name, text, archive_lang(code) if code else ""))
    return items


def mentions(element: Element) -> list[Mention]:
    """The creators and subjects of one record, as authority mentions."""
    dc = dc_of(element)
    return item_mentions(dc_items(dc)) if dc is not None else []


def item_mentions(items: list[Item]) -> list[Mention]:
    """The creators and subjects among a record's DC values, as authority mentions."""
    found = []
    for item in items:
        if item.element == "creator":
            found.append(Mention(AGENTS, "", item.text))
        elif item.element == "subject":
            found.append(Mention(SUBJECTS, "subject", item.text, lang=item.lang or NEUTRAL_LANG))
    return found


def dc_page(
    archive: Archive, elements: list[Element], summary: ImportSummary | None = None
) -> list[Built | Skip]:
    """The records of a page (``oai:record`` or ``oai_dc:dc`` elements), their creators and
    subjects found or created in the authority sections first (those created counted in
    ``summary``); a deleted or unusable record is a :class:`~.base.Skip` (line = its element's
    line, no file)."""
    ensure_dc_schema(archive)
    read = [(e, dc_items(dc) if (dc := dc_of(e)) is not None else []) for e in elements]
    mentioned = [m for _, i in read for m in item_mentions(i)]
    authorities = ensure_authorities(archive, mentioned, summary=summary)
    out: list[Built | Skip] = []
    for element, items in read:
        try:
            out.append(dc_record(element, authorities, items=items))
        except ImportFailed as exc:
            out.append(Skip.of_error(line_of(element), "", exc))
    return out


def dc_record(
    element: Element,
    authorities: Mapping[str, RecordKey] | None = None,
    identifier: str = "",
    *,
    items: list[Item] | None = None,
) -> Built:
    """One ``oai:record`` (or ``oai_dc:dc``) as a ``dc1`` record.

    ``authorities`` (external id → key, from :func:`~.authorities.ensure_authorities` over
    :func:`mentions`) links creators and subjects; without it they are kept as text only.
    ``identifier`` is the OAI identifier when the caller read it elsewhere (else the header
    around ``element`` gives it); ``items`` its :func:`dc_items`, when the caller has them.

    Raises:
        ImportFailed: ``import.deleted_record`` for a deleted record, ``import.missing_id`` for
            a record without any identifier, ``import.not_dublin_core`` for a record with no
            ``oai_dc:dc``.
    """
    header = header_of(element)
    if identifier:
        header = Header(identifier, header.datestamp, header.deleted, header.sets)
    if header.deleted:
        raise ImportFailed(
            DELETED, Phrase.of("record {id!r} is marked deleted", id=header.identifier)
        )
    dc = dc_of(element)
    if dc is None:
        raise ImportFailed(
            NOT_DC, Phrase.of("record {id!r} holds no oai_dc:dc", id=header.identifier)
        )
    items = dc_items(dc) if items is None else items
    external_id = header.identifier or next(
        (i.text for i in items if i.element == "identifier"), ""
    )
    if not external_id:
        raise ImportFailed(MISSING_ID, "a record with neither an OAI nor a dc:identifier")
    values: Values = {}
    _put_items(values, items)
    links = _put_links(values, items, authorities or {})
    for item in items:
        if item.element == "date" and (iso := iso_date(item.text)):
            put(values, "dc11", iso)
    put(values, "dc20", header.identifier or None)
    put(values, "dc21", header.datestamp or None)
    for spec in header.sets:
        put(values, "dc22", spec)
    closed = any(i.element == "rights" and rights_close(i.text) for i in items)
    record = NewRecord(
        SECTION, values, external_id=external_id, restricted=True if closed else None
    )
    return Built(record, links)


def build_record(metadata: Element, identifier: str) -> Built:
    """The harvester's crosswalk (:mod:`.oai_crosswalks`): the ``oai_dc:dc`` inside one
    ``<metadata>`` and its OAI identifier as a record (creators and subjects as text only; use
    :func:`dc_page` to link them).

    Raises:
        BadRow: a record that cannot be imported (see :func:`dc_record`).
    """
    try:
        return dc_record(metadata, identifier=identifier)
    except ImportFailed as exc:
        raise BadRow(exc.message_words) from exc


COPYRIGHT = re.compile(
    r"(?:all |some )?rights reserved|(?:tous )?(?:les )?droits r[ée]serv[ée]s"
    r"|(?:todos )?(?:los )?derechos reservados|(?:tots )?(?:els )?drets reservats",
    re.IGNORECASE,
)


def rights_close(text: str) -> bool:
    """Whether a ``dc:rights``/``dcterms:accessRights`` statement closes the material: the EAD
    importer's :func:`~.access.closes_access`, copyright notices ("tous droits réservés") aside."""
    return closes_access(COPYRIGHT.sub(" ", text))


def _put_items(values: Values, items: list[Item]) -> None:
    """Each DC value into its field, with its language (declared, else guessed)."""
    declared = [i.text for i in items if i.element == "language"]
    default = (
        archive_lang(declared[0]) if len(declared) == 1 and LANG_CODE.match(declared[0]) else ""
    )
    untagged = [i.text for i in items if not i.lang and ELEMENT_FIELDS[i.element] in TEXT_FIELDS]
    guess = None if default or not untagged else guess_import_lang(" ".join(untagged))
    for item in items:
        tipo = ELEMENT_FIELDS[item.element]
        entry: dict[str, Any] = {"lang": NEUTRAL_LANG, "value": item.text}
        if tipo in TEXT_FIELDS:
            if item.lang or default:
                entry["lang"] = item.lang or default
            elif guess is not None:
                entry.update(lang=guess, lang_guessed=True)
        elif item.lang:
            entry["lang"] = item.lang
        if tipo == "dc2" and any(t["lang"] == entry["lang"] for t in values.get(tipo, [])):
            tipo = "dc23"  # the label is the first title of each language
        values.setdefault(tipo, []).append(entry)


def _put_links(values: Values, items: list[Item], authorities: Mapping[str, RecordKey]) -> int:
    """Creators → ``agent1`` (``dc4``), subjects → ``subject1`` (``dc6``); distinct links."""
    linked: set[RecordKey] = set()
    for item in items:
        if item.element == "creator":
            mention, tipo = Mention(AGENTS, "", item.text), "dc4"
        elif item.element == "subject":
            mention, tipo = Mention(SUBJECTS, "subject", item.text), "dc6"
        else:
            continue
        key = authorities.get(mention.external_id)
        if key is not None and key not in linked:
            put(values, tipo, key.to_locator())
            linked.add(key)
    return len(linked)
