"""Importer of EAC-CPF authority records (persons, families, corporate bodies) into ``agent1``.

PATH is one EAC-CPF file or a folder of ``*.xml`` (each file one ``<eac-cpf>``, or a wrapper
holding several). Every record is upserted into the shared authority section ``agent1`` (see
:mod:`.authorities`) under the source ``authority`` with the external id = ``recordId``, so an
EAD ``origination`` with ``@authfilenumber`` and the EAC-CPF record of that agent are one
record, whichever was imported first. Crosswalk (``docs/importing.md``, "EAC-CPF"):

=============================================  ==============================================
EAC-CPF                                        ``agent1`` field
=============================================  ==============================================
``control/recordId``                           external id; first item of ``agent10``
``control/otherRecordId``, ``identity/entityId``  ``agent10`` as ``TYPE: value``
``identity/entityType``                        ``agent4``
authorised ``nameEntry`` (``@localType``       ``agent2`` (parts joined by ", ")
``autorisée``/``authorized``, an
``authorizedForm``, else the first)
every other ``nameEntry``                      ``agent3``, one item each
``existDates`` (text as written)               ``agent5`` (``from – to``)
``fromDate``/``date`` ``@standardDate``          ``agent6``; ``toDate`` → ``agent7``
``placeEntry``                                 ``agent8`` → ``place1`` (``@vocabularySource``
                                               is the place's authority number)
``biogHist`` paragraphs, list items            ``agent9`` (one paragraph per line)
``function``, ``occupation``, ``legalStatus``,  ``agent15`` (``function: culture``…)
``mandate``
``structureOrGenealogy``                       ``agent17``
``cpfRelation``                                ``agent11`` → ``agent1`` when the target is in
                                               the archive or this import; always a line in
                                               ``agent12``; ``identity`` URIs also in
                                               ``agent10``
``resourceRelation`` ``creatorOf``/``subjectOf``  ``agent13``/``agent14`` → ``ead1`` (EAD ids
                                               ``FRAN_IR_003500``, ``FRAN_IR_003500#d_1``);
                                               always a line in ``agent18``
``maintenanceAgency/agencyName``               ``agent19``
the file's name                                ``agent16``
``conventionDeclaration`` = the export notice  the record is restricted (an Arxiu export)
=============================================  ==============================================

Languages: a name's ``@xml:lang`` (``fre`` → ``lg-fra``), else the record's
``languageDeclaration``. Targets missing from the archive are counted in
``summary.unresolved``/``unresolved_targets`` (normal in the ANF sample); importing the EAD first,
or the EAC-CPF again after it, resolves them. Keys of all the import's records are reserved first,
so links between records of one import resolve in one pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.authorities import (
    AGENTS,
    DESCRIPTIONS,
    PLACES,
    SOURCE,
    Mention,
    ensure_authorities,
    ensure_authority_schema,
)
from app.core.archive.importers.base import (
    DUPLICATE,
    Built,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    Values,
    external_keys,
    put,
    reserve_keys,
)
from app.core.archive.importers.dates import is_day
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.safe_xml import (
    Element,
    attr,
    child,
    children,
    descendants,
    local,
    text_of,
    xml_lang,
)
from app.core.archive.importers.xml_input import read_xml, xml_files
from app.core.archive.model import NEUTRAL_LANG, RecordKey

if TYPE_CHECKING:
    from app.core.archive.store import Archive

KIND = "eac-cpf"
EAD_SOURCE = "ead"
"""The source under which the EAD importer files its descriptions (``ead1``)."""
NOT_EAC_CPF = "import.not_eac_cpf"
"""A well-formed XML file that holds no ``<eac-cpf>`` record."""
MISSING_ID = "import.missing_id"
"""An ``<eac-cpf>`` without a ``control/recordId``."""

AUTHORISED = frozenset({"autorisée", "autorisee", "authorized", "authorised", "preferred"})
FUNCTION_ELEMENTS = ("function", "occupation", "legalStatus", "mandate")
RESOURCE_FIELDS = {"creatorOf": "agent13", "subjectOf": "agent14"}
DASH = " – "
ISO_DATE = re.compile(r"^-?\d{4}(?:-\d{2}(?:-\d{2})?)?$")


@dataclass(frozen=True)
class Targets:
    """Where relations may point: agents, descriptions and places by external id."""

    agents: dict[str, RecordKey]
    descriptions: dict[str, RecordKey]
    places: dict[str, RecordKey]


@dataclass(frozen=True)
class Found:
    """One ``<eac-cpf>`` element read from a file."""

    element: Element
    file: str
    record_id: str


def import_eac_cpf(
    archive: Archive, path: Path, progress: ProgressFn | None = None
) -> ImportSummary:
    """Import the EAC-CPF file or folder at ``path`` into ``agent1`` (see the module doc)."""
    files = xml_files(Path(path), "an EAC-CPF")
    summary = ImportSummary(kind=KIND, path=str(path), read_unit="records")
    found = _read_all(files, summary)
    ensure_authority_schema(archive)
    places = ensure_authorities(
        archive, [m for item in found for m in place_mentions(item.element)], "", summary=summary
    )
    reserved = reserve_keys(archive, SOURCE, AGENTS, [item.record_id for item in found])
    targets = Targets(
        agents={k: v for k, v in reserved.items() if v.section_tipo == AGENTS},
        descriptions={
            k: v
            for k, v in external_keys(archive, EAD_SOURCE).items()
            if v.section_tipo == DESCRIPTIONS
        },
        places=places,
    )
    run = ImportRun(archive, summary, SOURCE)
    for number, item in enumerate(found, start=1):
        run.add(build_agent(item.element, targets, item.file), line_of(item.element), item.file)
        if progress is not None:
            progress(number, len(found))
    run.flush()
    return summary


def _read_all(files: list[Path], summary: ImportSummary) -> list[Found]:
    """Every ``<eac-cpf>`` of ``files`` with a record id; the others reported as skips."""
    found: list[Found] = []
    seen: dict[str, str] = {}
    for file in files:
        root = read_xml(file, summary)
        if root is None:
            continue
        records = [root] if local(root) == "eac-cpf" else list(descendants(root, "eac-cpf"))
        if not records:
            reason = "no <eac-cpf> record (the root is <{root}>)"
            skip = Skip.said(line_of(root), file.name, NOT_EAC_CPF, reason, root=local(root))
            summary.skipped.append(skip)
        for element in records:
            summary.read += 1
            record_id = text_of(sub(sub(element, "control"), "recordId"))
            line = line_of(element)
            if not record_id:
                skip = Skip.said(line, file.name, MISSING_ID, "no control/recordId")
                summary.skipped.append(skip)
            elif record_id in seen:
                reason = "duplicate recordId {id!r} (first in {first})"
                said = {"id": record_id, "first": seen[record_id]}
                summary.skipped.append(Skip.said(line, file.name, DUPLICATE, reason, **said))
            else:
                seen[record_id] = file.name
                found.append(Found(element, file.name, record_id))
    return found


def sub(node: Element | None, *names: str) -> Element | None:
    """The first child of ``node`` named one of ``names`` (``None`` when ``node`` is)."""
    return None if node is None else child(node, *names)


def line_of(node: Element) -> int:
    """The element's line in its file (0 when unknown)."""
    line = node.sourceline
    return line if isinstance(line, int) else 0


def declared_lang(eac: Element) -> str:
    """The record's language (``control/languageDeclaration/language/@languageCode``)."""
    declaration = sub(sub(eac, "control"), "languageDeclaration")
    code = attr(sub(declaration, "language"), "languageCode")
    return archive_lang(code) if code else NEUTRAL_LANG


def _lang(node: Element | None, default: str) -> str:
    code = xml_lang(node)
    return archive_lang(code) if code else default


def _description(eac: Element) -> tuple[Element | None, Element | None, Element | None]:
    """``identity``, ``description`` and ``relations`` of the (first) ``cpfDescription``."""
    cpf = sub(eac, "cpfDescription")
    if cpf is None:
        cpf = next(descendants(eac, "cpfDescription"), None)
    return sub(cpf, "identity"), sub(cpf, "description"), sub(cpf, "relations")


def place_mentions(eac: Element) -> list[Mention]:
    """The places a record names (``placeEntry``), as authority mentions."""
    _, description, _ = _description(eac)
    if description is None:
        return []
    lang = declared_lang(eac)
    return [
        Mention(PLACES, "place", name, attr(entry, "vocabularySource"), _lang(entry, lang))
        for entry in descendants(description, "placeEntry")
        if (name := text_of(entry))
    ]


def build_agent(eac: Element, targets: Targets, file: str = "") -> Built:
    """One ``<eac-cpf>`` as an ``agent1`` record, linked to what ``targets`` holds."""
    control = sub(eac, "control")
    record_id = text_of(sub(control, "recordId"))
    lang = declared_lang(eac)
    identity, description, relations = _description(eac)
    values: Values = {}
    _names(values, identity, lang)
    put(values, "agent4", text_of(sub(identity, "entityType")) or None)
    _identifiers(values, record_id, control, identity)
    if description is not None:
        _exist_dates(values, sub(description, "existDates"))
        places = [targets.places.get(m.external_id) for m in place_mentions(eac)]
        for key in dict.fromkeys(k for k in places if k is not None):
            put(values, "agent8", key.to_locator())
        for node in children(description, "biogHist"):
            put(values, "agent9", blocks(node) or None, _lang(node, lang))
        for node in children(description, "structureOrGenealogy"):
            put(values, "agent17", blocks(node) or None, _lang(node, lang))
        for node in descendants(description, *FUNCTION_ELEMENTS):
            put(values, "agent15", _function(node), _lang(node, lang))
    links, unresolved = _relations(values, relations, targets, record_id, lang)
    put(values, "agent16", file or None)
    agency = sub(control, "maintenanceAgency")
    put(values, "agent19", text_of(sub(agency, "agencyName")) or None)
    reserved = targets.agents.get(record_id)
    record = NewRecord(
        AGENTS,
        values,
        external_id=record_id,
        section_id=reserved.section_id if reserved else None,
        restricted=True if marked_restricted(control) else None,
    )
    return Built(record, links, tuple(unresolved))


def marked_restricted(control: Element | None) -> bool:
    """Whether an Arxiu export marked the record restricted (its notice as a convention)."""
    from app.core.archive.exporters.base import RESTRICTED_NOTICE  # exporters use this module

    if control is None:
        return False
    return any(
        text_of(sub(node, "citation")) == RESTRICTED_NOTICE
        for node in children(control, "conventionDeclaration")
    )


def _names(values: Values, identity: Element | None, lang: str) -> None:
    """The authorised name into ``agent2``, every other form into ``agent3``."""
    entries = list(descendants(identity, "nameEntry")) if identity is not None else []
    if not entries:
        return
    authorised = next(
        (
            e
            for e in entries
            if attr(e, "localType").casefold() in AUTHORISED or sub(e, "authorizedForm") is not None
        ),
        entries[0],
    )
    for entry in entries:
        name = ", ".join(t for p in children(entry, "part") if (t := text_of(p))) or text_of(entry)
        if name:
            put(values, "agent2" if entry is authorised else "agent3", name, _lang(entry, lang))


def _identifiers(
    values: Values, record_id: str, control: Element | None, identity: Element | None
) -> None:
    put(values, "agent10", record_id)
    others = list(children(control, "otherRecordId")) if control is not None else []
    others += list(children(identity, "entityId")) if identity is not None else []
    for node in others:
        text, kind = text_of(node), attr(node, "localType")
        put(values, "agent10", (f"{kind}: {text}" if kind else text) if text else None)


def date_text(node: Element | None) -> str:
    """A date, range or set as written: ``18 octobre 1802 – 5 juin 1873``, ``1790 –``."""
    if node is None:
        return ""
    name = local(node)
    if name == "dateRange":
        start = text_of(sub(node, "fromDate")) or attr(sub(node, "fromDate"), "standardDate")
        end = text_of(sub(node, "toDate")) or attr(sub(node, "toDate"), "standardDate")
        return (start + DASH + end).strip()
    if name == "date":
        return text_of(node) or attr(node, "standardDate")
    parts = [date_text(item) for item in children(node, "date", "dateRange", "dateSet")]
    return "; ".join(p for p in parts if p)


def _standard(node: Element | None) -> str | None:
    if node is None:
        return None
    value = attr(node, "standardDate") or text_of(node)
    if not ISO_DATE.match(value):
        return None
    parts = [int(part) for part in value.lstrip("-").split("-")] + [1, 1]
    return value if is_day(parts[0], parts[1], parts[2]) else None  # not 1989-13


def _exist_dates(values: Values, exist: Element | None) -> None:
    """``agent5`` as written, ``agent6``/``agent7`` the ISO start and end."""
    if exist is None:
        return
    dates = [d for d in children(exist, "date", "dateRange", "dateSet")]
    put(values, "agent5", "; ".join(t for d in dates if (t := date_text(d))) or None)
    starts = [n for n in exist.iter() if local(n) in ("fromDate", "date")]
    ends = [n for n in exist.iter() if local(n) in ("toDate", "date")]
    start = next((s for n in starts if (s := _standard(n))), None)
    end = next((s for n in reversed(ends) if (s := _standard(n))), None)
    put(values, "agent6", start)
    if end is not None and (end != start or any(local(n) == "toDate" for n in ends)):
        put(values, "agent7", end)


def blocks(node: Element) -> str:
    """The paragraphs of a ``biogHist``-like element, one per line (list items and chronology
    entries too), joined by blank lines."""
    parts: list[str] = []
    for item in node.iter():
        name = local(item)
        if name in ("p", "item", "citation") and not _inside(item, node, "chronItem"):
            parts.append(text_of(item))
        elif name == "chronItem":
            when = date_text(sub(item, "date", "dateRange", "dateSet"))
            event = text_of(sub(item, "event"))
            parts.append(f"{when}: {event}" if when else event)
    parts = [p for p in parts if p]
    return "\n\n".join(parts) if parts else text_of(node)


def _inside(item: Element, top: Element, name: str) -> bool:
    parent = item.getparent()
    while parent is not None and parent is not top:
        if local(parent) in (name, "p", "item"):
            return True
        parent = parent.getparent()
    return False


def _function(node: Element) -> str | None:
    """``occupation: député``: the element's name and its term (or citation, or note)."""
    text = (
        text_of(sub(node, "term"))
        or text_of(sub(node, "citation"))
        or text_of(sub(node, "descriptiveNote"))
        or text_of(node)
    )
    return f"{local(node)}: {text}" if text else None


def relation_line(kind: str, entry: str, href: str, dates: str) -> str:
    """``type: name (target)`` then `` [dates]`` when the relation has dates."""
    line = f"{kind}: {entry or href}"
    if href:
        line += f" ({href})"
    return line + (f" [{dates}]" if dates else "")


def agent_target(href: str, agents: dict[str, RecordKey]) -> tuple[str, RecordKey | None]:
    """The agent id an ``@xlink:href`` names (``FRAN_NP_005406``, or a URI ending with it)
    and its record when known."""
    if href in agents:
        return href, agents[href]
    last = re.split(r"[/#=]", href.rstrip("/"))[-1]
    return (last, agents[last]) if last in agents else (last or href, None)


def _relations(
    values: Values, relations: Element | None, targets: Targets, record_id: str, lang: str
) -> tuple[int, list[str]]:
    """``cpfRelation`` and ``resourceRelation`` into links and text lines."""
    if relations is None:
        return 0, []
    linked: set[tuple[str, RecordKey]] = set()
    unresolved: list[str] = []
    for rel in children(relations, "cpfRelation"):
        kind = attr(rel, "cpfRelationType") or "associative"
        href = attr(rel, "href")
        dates = date_text(sub(rel, "dateRange", "date", "dateSet"))
        entry = text_of(sub(rel, "relationEntry"))
        put(values, "agent12", relation_line(kind, entry, href, dates), _lang(rel, lang))
        target, key = agent_target(href, targets.agents)
        if key is not None and target != record_id:
            put(values, "agent11", {**key.to_locator(), "role": kind})
            linked.add(("agent11", key))
        elif kind == "identity" and href:
            put(values, "agent10", href)
        elif href and target != record_id:
            unresolved.append(target)
    for rel in children(relations, "resourceRelation"):
        kind = attr(rel, "resourceRelationType") or "other"
        href = attr(rel, "href")
        entry = text_of(sub(rel, "relationEntry"))
        put(values, "agent18", relation_line(kind, entry, href, ""), _lang(rel, lang))
        field = RESOURCE_FIELDS.get(kind)
        key = targets.descriptions.get(href)
        if field is not None and key is not None:
            put(values, field, key.to_locator())
            linked.add((field, key))
        elif field is not None and href:
            unresolved.append(href)
    return len(linked), unresolved
