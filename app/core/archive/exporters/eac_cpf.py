"""Exporter of authority records (``agent1``) as EAC-CPF 2010 documents, one per record.

Layout: exporting a section writes the folder OUT with one file per record, named by its record
id (``OUT/FRAN_NP_051234.xml``; a record without one is ``OUT/agent1-7.xml``). ``--record``
writes that one record to OUT when OUT ends in ``.xml``, else into the folder OUT. Each file
validates against the EAC-CPF 2010 schema and imports back (``arxiu import eac-cpf OUT``) into
the same names, dates, types, histories, functions, places and relations.

What is written, from the fields of :mod:`~app.core.archive.importers.authorities`:

- ``control``: ``recordId`` (the first ``agent10`` item), ``maintenanceStatus``
  (``revised`` for an imported record, else ``new``), ``maintenanceAgency`` (``agent19``, else
  "Arxiu"), a ``languageDeclaration`` (the record's commonest language), for a restricted
  record a ``conventionDeclaration`` whose citation is :data:`RESTRICTED_NOTICE` (and the file
  starts with the notice as a comment), and one ``maintenanceEvent`` (``derived``, now).
- ``identity``: the other ``agent10`` items as ``entityId`` (``TYPE: value`` → ``@localType``),
  ``entityType`` (``agent4``; ``person`` when missing), the authorised name (``agent2``,
  ``@localType="authorized"``) then the other names (``agent3``), with ``@xml:lang``.
- ``description``: ``existDates`` (``agent5`` as written, ``agent6``/``agent7`` as
  ``@standardDate``), ``place/placeEntry`` (``agent8``'s places, ``@vocabularySource`` =
  their identifier), ``function``/``occupation``/``legalStatus``/``mandate`` (``agent15``),
  ``structureOrGenealogy`` (``agent17``) and ``biogHist`` (``agent9``), one ``p`` per paragraph.
- ``relations``: a ``cpfRelation`` per ``agent12`` line (type, ``@xlink:href``, entry, dates)
  and per ``agent11`` link no line names; a ``resourceRelation`` per ``agent18`` line and per
  ``agent13``/``agent14`` link no line names (``@xlink:href`` = the EAD id of the description).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lxml import etree

from app.core.archive.exporters.base import (
    RESTRICTED_NOTICE,
    ExportRequest,
    ExportSummary,
    one_file_each,
    selected,
    unwritable,
    writable,
)
from app.core.archive.importers.authorities import AGENTS, SOURCE
from app.core.archive.importers.eac_cpf import DASH, EAD_SOURCE
from app.core.archive.importers.languages import iso_lang
from app.core.archive.model import NEUTRAL_LANG, Record, RecordKey
from app.core.archive.store import now
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

FORMAT = "eac-cpf"
NS = "urn:isbn:1-931666-33-4"
XLINK = "http://www.w3.org/1999/xlink"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
ENTITY_TYPES = frozenset({"person", "family", "corporateBody"})
CPF_TYPES = frozenset(
    {
        "identity",
        "hierarchical",
        "hierarchical-parent",
        "hierarchical-child",
        "temporal",
        "temporal-earlier",
        "temporal-later",
        "family",
        "associative",
    }
)
RESOURCE_TYPES = frozenset({"creatorOf", "subjectOf", "other"})
FUNCTION_ELEMENTS = ("function", "occupation", "legalStatus", "mandate")
LINE = re.compile(
    r"^(?P<kind>[^:\s]+): (?P<entry>.*?)(?: \((?P<href>[^()\s]+)\))?(?: \[(?P<dates>[^\[\]]*)\])?$",
    re.DOTALL,
)
TYPED_ID = re.compile(r"^(?P<kind>[A-Za-z_][\w.-]*): (?P<value>.+)$")
SAFE_NAME = re.compile(r"[^\w.-]+")


@dataclass(frozen=True)
class Relation:
    """One relation line (``agent12``/``agent18``) read back: type, entry, target, dates."""

    kind: str
    entry: str
    href: str
    dates: str
    lang: str


@dataclass(frozen=True)
class Context:
    """What every record's document needs from the archive: ids and labels of targets."""

    archive: Archive
    agent_ids: dict[RecordKey, str]
    """Agent record → its authority id (``FRAN_NP_…``)."""
    ead_ids: dict[RecordKey, str]
    """Description record → its EAD id (``FRAN_IR_003500#d_1``)."""
    imported: frozenset[RecordKey]


def export(archive: Archive, request: ExportRequest) -> ExportSummary:
    """Write the selected ``agent1`` records as EAC-CPF files (see the module doc).

    Raises:
        ArxiuError: ``export.section_unknown``, ``export.record_unknown``,
            ``export.unwritable``, ``export.section_unsupported`` (not an agent section).
    """
    if request.section != AGENTS:
        raise ArxiuError(
            "export.section_unsupported",
            Phrase.of(
                "EAC-CPF describes persons, families and corporate bodies ({agents}), "
                "not {section!r}.",
                agents=AGENTS,
                section=request.section,
            ),
            hint=Phrase.of(
                "Export --section {agents}, or use dc, csv or json for other sections.",
                agents=AGENTS,
            ),
            category="input",
        )
    single = request.record is not None and request.out.suffix.lower() == ".xml"
    summary = ExportSummary(format=FORMAT, path=str(request.out.expanduser()))
    records = list(selected(archive, request, summary))
    if not single:
        one_file_each(request.out, len(records))
    out = writable(request.out)
    folder = out.parent if single else out
    context = _context(archive)
    used: set[str] = set()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for record in records:
            restricted = archive.is_restricted(record.key)
            target = out if single else folder / _file_name(record, used)
            target.write_bytes(document_bytes(record, context, restricted))
    except OSError as exc:
        raise unwritable(out, exc) from exc
    if summary.restricted_included:
        summary.notes.append(Phrase.of(RESTRICTED_NOTICE))
    return summary


def _context(archive: Archive) -> Context:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT source, external_id, section_tipo, section_id FROM external_ids "
            "WHERE source IN (?, ?)",
            (SOURCE, EAD_SOURCE),
        ).fetchall()
    agents: dict[RecordKey, str] = {}
    eads: dict[RecordKey, str] = {}
    for source, external_id, tipo, sid in rows:
        key = RecordKey(tipo, sid)
        if source == SOURCE and tipo == AGENTS:
            agents.setdefault(key, external_id)
        elif source == EAD_SOURCE:
            eads.setdefault(key, external_id)
    return Context(archive, agents, eads, frozenset(agents))


def _file_name(record: Record, used: set[str]) -> str:
    record_id = record_id_of(record)
    stem = SAFE_NAME.sub("_", record_id).strip("._") or f"{AGENTS}-{record.section_id}"
    if stem in used:
        stem = f"{stem}-{record.section_id}"
    used.add(stem)
    return stem + ".xml"


def record_id_of(record: Record) -> str:
    """The record's authority id (first ``agent10`` item), else ``agent1-ID``."""
    ids = [str(i["value"]) for i in record.items("agent10") if str(i.get("value") or "").strip()]
    return ids[0].strip() if ids else f"{AGENTS}-{record.section_id}"


def document_bytes(record: Record, context: Context, restricted: bool = False) -> bytes:
    """The EAC-CPF file of one record (the notice comment first when it is restricted)."""
    root = eac_element(record, context, restricted)
    body = etree.tostring(root, encoding="UTF-8", xml_declaration=not restricted, pretty_print=True)
    if not restricted:
        return body
    return etree.tostring(etree.Comment(f" {RESTRICTED_NOTICE} ")) + b"\n" + body


def _e(parent: etree._Element, name: str, text: str | None = None, **attrs: str) -> etree._Element:
    node = etree.SubElement(parent, f"{{{NS}}}{name}")
    for key, value in attrs.items():
        if value:
            node.set(key, value)
    if text is not None:
        node.text = text
    return node


def _lang_attr(lang: str, declared: str) -> dict[str, str]:
    code = iso_lang(lang) if lang != declared else ""
    return {XML_LANG: code} if code else {}


def _values(record: Record, tipo: str) -> list[tuple[str, str]]:
    """``(text, lang)`` of a field's non-empty items."""
    return [
        (str(i["value"]), str(i.get("lang") or NEUTRAL_LANG))
        for i in record.items(tipo)
        if isinstance(i.get("value"), str) and i["value"].strip()
    ]


def declared_lang(record: Record) -> str:
    """The commonest language of the record's texts (neutral when none has one)."""
    counts = Counter(
        lang
        for tipo in ("agent2", "agent3", "agent9", "agent12", "agent15", "agent17", "agent18")
        for _, lang in _values(record, tipo)
        if lang != NEUTRAL_LANG
    )
    return counts.most_common(1)[0][0] if counts else NEUTRAL_LANG


def eac_element(record: Record, context: Context, restricted: bool = False) -> etree._Element:
    """The ``<eac-cpf>`` element of one ``agent1`` record."""
    root = etree.Element(f"{{{NS}}}eac-cpf", nsmap={None: NS, "xlink": XLINK})  # type: ignore[dict-item]
    declared = declared_lang(record)
    _control(root, record, context, declared, restricted)
    cpf = _e(root, "cpfDescription")
    relations = [parse_line(t, lang) for t, lang in _values(record, "agent12")]
    resources = [parse_line(t, lang) for t, lang in _values(record, "agent18")]
    _identity(cpf, record, declared, {r.href for r in relations})
    _description(cpf, record, context, declared)
    _relations(cpf, record, context, declared, relations, resources)
    return root


def _control(
    root: etree._Element, record: Record, context: Context, declared: str, restricted: bool
) -> None:
    control = _e(root, "control")
    _e(control, "recordId", record_id_of(record))
    status = "revised" if record.key in context.imported else "new"
    _e(control, "maintenanceStatus", status)
    agency = _values(record, "agent19")
    _e(_e(control, "maintenanceAgency"), "agencyName", agency[0][0] if agency else "Arxiu")
    code = declared.removeprefix("lg-")
    if declared != NEUTRAL_LANG and code:
        declaration = _e(control, "languageDeclaration")
        _e(declaration, "language", code, languageCode=code)
        _e(declaration, "script", "Latin", scriptCode="Latn")
    if restricted:
        _e(_e(control, "conventionDeclaration"), "citation", RESTRICTED_NOTICE)
    event = _e(_e(control, "maintenanceHistory"), "maintenanceEvent")
    _e(event, "eventType", "derived")
    stamp = now()
    _e(event, "eventDateTime", stamp, standardDateTime=stamp)
    _e(event, "agentType", "machine")
    _e(event, "agent", "Arxiu")
    _e(event, "eventDescription", f"Exported from the Arxiu record {record.key}.")


def _identity(cpf: etree._Element, record: Record, declared: str, hrefs: set[str]) -> None:
    identity = _e(cpf, "identity")
    for text, _ in _values(record, "agent10")[1:]:
        if text in hrefs:
            continue  # an identity relation's URI: written as that cpfRelation
        typed = TYPED_ID.match(text)
        if typed:
            _e(identity, "entityId", typed["value"], localType=typed["kind"])
        else:
            _e(identity, "entityId", text)
    kinds = [t for t, _ in _values(record, "agent4") if t in ENTITY_TYPES]
    _e(identity, "entityType", kinds[0] if kinds else "person")
    names = [(t, lang, "authorized") for t, lang in _values(record, "agent2")[:1]]
    names += [
        (t, lang, "") for t, lang in _values(record, "agent2")[1:] + _values(record, "agent3")
    ]
    if not names:
        names = [(record_id_of(record), NEUTRAL_LANG, "authorized")]
    for text, lang, kind in names:
        entry = _e(identity, "nameEntry", localType=kind, **_lang_attr(lang, declared))
        _e(entry, "part", text)


def _description(cpf: etree._Element, record: Record, context: Context, declared: str) -> None:
    description = etree.Element(f"{{{NS}}}description")
    written = _values(record, "agent5")
    starts, ends = _values(record, "agent6"), _values(record, "agent7")
    if written or starts or ends:
        exist = _e(description, "existDates")
        text = written[0][0] if written else ""
        dates_into(exist, text, starts[0][0] if starts else "", ends[0][0] if ends else "")
    _places(description, record, context, declared)
    for text, lang in _values(record, "agent15"):
        kind, _, term = text.partition(": ")
        if kind not in FUNCTION_ELEMENTS or not term:
            kind, term = "function", text
        _e(_e(description, kind, **_lang_attr(lang, declared)), "term", term)
    for tipo, name in (("agent17", "structureOrGenealogy"), ("agent9", "biogHist")):
        for text, lang in _values(record, tipo):
            node = _e(description, name, **_lang_attr(lang, declared))
            for paragraph in text.split("\n\n"):
                if paragraph.strip():
                    _e(node, "p", paragraph.strip())
    if len(description):
        cpf.append(description)


def _places(description: etree._Element, record: Record, context: Context, declared: str) -> None:
    for key in _targets(record, "agent8"):
        place = context.archive.find_record(key)
        if place is None:
            continue
        for name, lang in _values(place, "place2")[:1]:
            number = _values(place, "place3")
            attrs = {"vocabularySource": number[0][0]} if number else {}
            _e(_e(description, "place"), "placeEntry", name, **attrs, **_lang_attr(lang, declared))


def dates_into(parent: etree._Element, text: str, start: str = "", end: str = "") -> None:
    """A date as written (``18 octobre 1802 – 5 juin 1873``, ``1790 –``, ``a; b``) as
    ``date``/``dateRange``/``dateSet`` under ``parent``, ISO ``start``/``end`` as standardDate."""
    parts = [p for p in text.split("; ") if p.strip()] or [""]
    target = _e(parent, "dateSet") if len(parts) > 1 else parent
    for number, part in enumerate(parts):
        first, last = number == 0, number == len(parts) - 1
        left, dash, right = part.partition(DASH.strip())
        if dash or (first and last and start and end and start != end):
            rng = _e(target, "dateRange")
            if left.strip() or (first and start):
                _e(rng, "fromDate", left.strip() or start, standardDate=start if first else "")
            if right.strip() or (last and end):
                _e(rng, "toDate", right.strip() or end, standardDate=end if last else "")
        else:
            _e(target, "date", part.strip() or start or end, standardDate=start if first else "")


def parse_line(text: str, lang: str = NEUTRAL_LANG) -> Relation:
    """A relation line ``type: entry (href) [dates]`` (see the importer) read back."""
    match = LINE.match(text.strip())
    if match is None:
        return Relation("", text.strip(), "", "", lang)
    return Relation(match["kind"], match["entry"], match["href"] or "", match["dates"] or "", lang)


def _targets(record: Record, tipo: str) -> list[RecordKey]:
    keys: list[RecordKey] = []
    for item in record.items(tipo):
        value: Any = item.get("value")
        if isinstance(value, dict) and "section_tipo" in value and "section_id" in value:
            key = RecordKey(str(value["section_tipo"]), int(value["section_id"]))
            if key not in keys:
                keys.append(key)
    return keys


def _relations(
    cpf: etree._Element,
    record: Record,
    context: Context,
    declared: str,
    relations: list[Relation],
    resources: list[Relation],
) -> None:
    named = {r.href for r in relations + resources if r.href}
    extra = [
        _linked(context, key, "associative", context.agent_ids)
        for key in _targets(record, "agent11")
        if context.agent_ids.get(key) not in named
    ]
    for tipo, kind in (("agent13", "creatorOf"), ("agent14", "subjectOf")):
        extra += [
            _linked(context, key, kind, context.ead_ids)
            for key in _targets(record, tipo)
            if context.ead_ids.get(key) not in named
        ]
    cpfs = relations + [r for r in extra if r.kind not in RESOURCE_TYPES]
    res = resources + [r for r in extra if r.kind in RESOURCE_TYPES]
    if not cpfs and not res:
        return
    parent = _e(cpf, "relations")
    for relation in cpfs:
        kind = relation.kind if relation.kind in CPF_TYPES else ""
        _relation(parent, "cpfRelation", relation, declared, cpfRelationType=kind)
    for relation in res:
        kind = relation.kind if relation.kind in RESOURCE_TYPES else "other"
        _relation(parent, "resourceRelation", relation, declared, resourceRelationType=kind)


def _linked(context: Context, key: RecordKey, kind: str, ids: dict[RecordKey, str]) -> Relation:
    """A relation for a link no text line names: the target's id and label."""
    label = context.archive.record_label(key) if context.archive.find_record(key) else str(key)
    return Relation(kind, label, ids.get(key, f"arxiu:{key}"), "", NEUTRAL_LANG)


def _relation(
    parent: etree._Element, name: str, relation: Relation, declared: str, **kind: str
) -> None:
    attrs = dict(kind)
    if relation.href:
        attrs[f"{{{XLINK}}}href"] = relation.href
        attrs[f"{{{XLINK}}}type"] = "simple"
    node = _e(parent, name, **attrs, **_lang_attr(relation.lang, declared))
    _e(node, "relationEntry", relation.entry or relation.href)
    if relation.dates:
        dates_into(node, relation.dates)
