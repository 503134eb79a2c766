"""EAD3 export of archival descriptions (``ead1``, or a table's hierarchy): fonds and all below.

``arxiu export ead3 --section ead1 OUT`` writes every top-level record (one without a "part
of") as one ``<ead xmlns="http://ead3.archivists.org/schema/">`` finding aid; ``--record K``
writes ``K`` and everything under it. Layout: a single finding aid is written to the file
``OUT`` (or ``OUT/EADID.xml`` when ``OUT`` is an existing folder); several are written into the
folder ``OUT``, one ``EADID.xml`` each. ``arxiu import ead OUT`` reads either back.

Crosswalk (the reverse of :mod:`app.core.archive.importers.ead`):

* ``control``: ``recordid`` (the EADID), ``filedesc/titlestmt/titleproper`` (the finding aid's
  title), ``maintenancestatus`` ``derived``, ``maintenanceagency`` Arxiu, a
  ``languagedeclaration`` when the descriptions' language was declared (not guessed), and — when
  restricted records are included — a ``rightsdeclaration`` (``localtype="restricted"``) whose
  ``citation`` is :data:`~app.core.archive.exporters.base.RESTRICTED_NOTICE` (also written as a
  comment on the file's first line), then ``maintenancehistory``.
* ``archdesc`` and nested ``c``: ``@level`` (a level EAD3 does not enumerate becomes
  ``otherlevel`` + ``@otherlevel``; an archdesc without one gets ``otherlevel="unspecified"``,
  which imports back as no level), ``@id`` (the
  component id after ``#`` in the record's identifier, so the records keep their external ids),
  ``@audience="internal"`` on restricted records; ``did`` with ``unitid`` (``@localtype`` from
  the typed reference code), ``unittitle``, ``unitdate`` (the first with ``@normal`` = from/to;
  ``unitdatestructured`` when only the ISO range is known), ``physdesc`` (each extent),
  ``container`` (``Box 3, Folder 12`` → ``localtype="box"`` 3, ``localtype="folder"`` 12),
  ``abstract``, ``dao`` (``daotype="unknown"``, ``href``), ``origination`` (creators); then
  ``bioghist``, ``scopecontent``, ``arrangement``, ``acqinfo``, ``custodhist``,
  ``relatedmaterial``, ``accessrestrict`` (one ``p`` per paragraph), ``controlaccess``
  (``persname``/``famname``/``corpname``/``geogname``/``subject``/``genreform``/``function``/
  ``occupation`` with one ``part`` and ``@identifier`` = the authority id), and ``dsc`` with the
  children in order. A subtree's root (``--record`` of a component) names its parent in
  ``archdesc/relations/relation`` (``arcrole`` ``dcterms:isPartOf``, ``href`` = the parent's
  identifier, a ``relationentry localtype="order"``), and its ``recordid`` is its own
  identifier (``FRAN_IR_003500#d_1_2``): imported back, it goes where it was.

The output validates against the EAD3 1.1.1 schema (``tests/core/archive/exporters/
test_ead3.py``). Besides ``ead1``, a table's hierarchy (a section with a "part of" field,
``csv1``...) is written through its columns' roles (:mod:`.ead3_tables`); any other section is
``export.section_unsupported``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from lxml import etree

from app.core.archive.exporters.base import (
    RESTRICTED_NOTICE,
    ExportRequest,
    ExportSummary,
    one_file_each,
    require_record,
    require_section,
    unwritable,
    writable,
)
from app.core.archive.exporters.ead3_tables import described
from app.core.archive.importers import ead_fields as crosswalk
from app.core.archive.model import NEUTRAL_LANG, Record, RecordKey
from app.core.archive.records import locators
from app.core.counted import Counted
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

NS = crosswalk.EAD3_NS
LEFT_OUT = Counted(
    "1 field has no place in EAD3 and was not written: {fields}",
    "{n:,} fields have no place in EAD3 and were not written: {fields}",
)
"""The note of a table's export that leaves fields out (each named by its label)."""
FINDING_AIDS = Counted(
    "1 finding aid, one file in {out}", "{n:,} finding aids, one file each in {out}"
)
"""The note of an export written into a folder, one file per finding aid."""
LEVELS = frozenset(
    {"class", "collection", "file", "fonds", "item", "otherlevel", "recordgrp", "series"}
    | {"subfonds", "subgrp", "subseries"}
)
"""The values EAD3 allows in ``@level``."""
AGENT_ELEMENTS = {"person": "persname", "family": "famname", "corporateBody": "corpname"}
NOTE_ORDER = ("ead12", "ead11", "ead13", "ead14", "ead15", "ead16", crosswalk.ACCESS)
IS_PART_OF = "http://purl.org/dc/terms/isPartOf"
NOTE_NAMES = {tipo: name for name, tipo in crosswalk.NOTES.items()}
_NCNAME = re.compile(r"^[A-Za-z_][\w.\-]*$")
_CONTAINER = re.compile(r"^([A-Za-z][A-Za-z\-]*) (.+)$")
_UNSAFE = re.compile(r"[^\w.\-]+")

Element = etree._Element


def _q(name: str) -> str:
    return f"{{{NS}}}{name}"


def _sub(parent: Element, name: str, text: str | None = None, **attrs: str) -> Element:
    node = etree.SubElement(parent, _q(name), {k: v for k, v in attrs.items() if v})
    if text is not None:
        node.text = text
    return node


@dataclass
class Tree:
    """The section's records with their parents and children in order."""

    records: dict[RecordKey, Record]
    children: dict[RecordKey, list[RecordKey]]
    roots: list[RecordKey]
    section_restricted: bool

    def restricted(self, key: RecordKey) -> bool:
        """Whether the record is restricted (its own flag, else its section's)."""
        flag = self.records[key].restricted
        return self.section_restricted if flag is None else flag


def load_tree(archive: Archive, section: str) -> Tree:
    """Every record of ``section``, each under its "part of" parent, ordered by ``ead19``."""
    records = {r.key: r for r in archive.iter_records(section)}
    return tree_of(records, archive.section(section).restricted)


def tree_of(records: dict[RecordKey, Record], section_restricted: bool) -> Tree:
    """``records`` (``ead1``'s, or a table's read as them), each under its "part of" parent,
    ordered by ``ead19``, then by id."""
    children: dict[RecordKey, list[RecordKey]] = {}
    roots: list[RecordKey] = []
    for key, record in records.items():
        parents = [k for k in locators(record.items(crosswalk.PART_OF)) if k in records]
        if parents:
            children.setdefault(parents[0], []).append(key)
        else:
            roots.append(key)
    for keys in children.values():
        keys.sort(key=lambda k: (_order(records[k]), k.section_id))
    return Tree(records, children, sorted(roots), section_restricted)


def _order(record: Record) -> float:
    items = record.items(crosswalk.ORDER)
    value = items[0].get("value") if items else None
    return float(value) if isinstance(value, int | float) else float("inf")


@dataclass
class Authorities:
    """The agent, place and subject records named by the exported records (read once each)."""

    archive: Archive
    cache: dict[RecordKey, Record | None] = field(default_factory=dict)

    def get(self, key: RecordKey) -> Record | None:
        """The record ``key`` (``None`` when deleted)."""
        if key not in self.cache:
            self.cache[key] = self.archive.find_record(key)
        return self.cache[key]


def export(archive: Archive, request: ExportRequest) -> ExportSummary:
    """Write what ``request`` selects from ``ead1`` as EAD3 (see the module doc for the layout).

    Raises:
        ArxiuError: ``export.section_unknown``, ``export.section_unsupported``,
            ``export.record_unknown``, ``export.unwritable``.
    """
    require_section(archive, request.section)
    summary = ExportSummary(format="ead3", path=str(request.out))
    if request.section == crosswalk.SECTION:
        tree = load_tree(archive, request.section)
    else:  # a table's hierarchy, its columns read as EAD's by their roles
        table = described(archive, request.section, request.lang)
        tree = tree_of(table.records, archive.section(request.section).restricted)
        if table.left_out:
            fields = ", ".join(table.left_out)
            count = len(table.left_out)
            summary.notes.append(Phrase.of(LEFT_OUT.template(count), n=count, fields=fields))
    roots = tree.roots
    if request.record is not None:
        require_record(archive, request.record)
        roots = [request.record]
    authorities = Authorities(archive)
    documents: list[tuple[str, etree._ElementTree]] = []
    for root in roots:
        kept = list(_walk(tree, root, request, summary))
        if kept:
            documents.append(_document(tree, kept, authorities))
    _write(documents, Path(request.out), summary)
    return summary


def _walk(
    tree: Tree, root: RecordKey, request: ExportRequest, summary: ExportSummary
) -> Iterator[RecordKey]:
    """``root`` and everything under it, depth first; a left-out record takes its subtree."""
    stack = [root]
    while stack:
        key = stack.pop()
        if key not in tree.records:
            continue
        if not summary.admit(tree.restricted(key), request.include_restricted):
            continue
        yield key
        stack.extend(reversed(tree.children.get(key, [])))


@dataclass
class _Doc:
    """One finding aid being written."""

    tree: Tree
    kept: set[RecordKey]
    authorities: Authorities
    lang: str = NEUTRAL_LANG
    ids: set[str] = field(default_factory=set)


def _document(
    tree: Tree, kept: list[RecordKey], authorities: Authorities
) -> tuple[str, etree._ElementTree]:
    """``(EADID, document)`` of the finding aid rooted at ``kept[0]``."""
    root = tree.records[kept[0]]
    eadid = _first(root, crosswalk.IDENTIFIER) or f"{root.section_tipo}-{root.section_id}"
    doc = _Doc(tree, set(kept), authorities, _declared_lang(root))
    restricted = any(tree.restricted(k) for k in kept)
    ead = etree.Element(_q("ead"), nsmap={None: NS})  # type: ignore[dict-item]
    _control(ead, root, eadid, doc.lang, restricted)
    _unit(ead, "archdesc", root, doc)
    document = etree.ElementTree(ead)
    if restricted:
        ead.addprevious(etree.Comment(f" {RESTRICTED_NOTICE} "))
    return eadid, document


def _declared_lang(record: Record) -> str:
    """The language the root's title was declared in (not guessed), else neutral."""
    for item in record.items(crosswalk.TITLE):
        if not item.get("lang_guessed") and item.get("lang") != NEUTRAL_LANG:
            return str(item.get("lang"))
    return NEUTRAL_LANG


def _control(ead: Element, root: Record, eadid: str, lang: str, restricted: bool) -> None:
    control = _sub(ead, "control")
    _sub(control, "recordid", eadid)
    titlestmt = _sub(_sub(control, "filedesc"), "titlestmt")
    title = _first(root, crosswalk.FINDING_AID) or _first(root, crosswalk.TITLE) or eadid
    _sub(titlestmt, "titleproper", title)
    _sub(control, "maintenancestatus", value="derived")
    _sub(_sub(control, "maintenanceagency"), "agencyname", "Arxiu")
    if lang != NEUTRAL_LANG:
        declaration = _sub(control, "languagedeclaration")
        _sub(declaration, "language", langcode=_code(lang))
        _sub(declaration, "script", scriptcode="Latn")
    if restricted:
        rights = _sub(control, "rightsdeclaration", localtype="restricted")
        _sub(rights, "citation", RESTRICTED_NOTICE)
    event = _sub(_sub(control, "maintenancehistory"), "maintenanceevent")
    _sub(event, "eventtype", value="derived")
    now = datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat()
    _sub(event, "eventdatetime", now, standarddatetime=now)
    _sub(event, "agenttype", value="machine")
    _sub(event, "agent", "Arxiu")


def _code(lang: str) -> str:
    """``lg-fra`` → ``fra`` (EAD3 ``@lang``/``@langcode``)."""
    return lang[3:] if lang.startswith("lg-") else lang


def _unit(parent: Element, name: str, record: Record, doc: _Doc) -> None:
    """Write ``record`` as ``archdesc`` or ``c``, its children (those kept) in ``dsc``/``c``."""
    stack: list[tuple[Element, str, Record]] = [(parent, name, record)]
    while stack:
        container, tag, current = stack.pop()
        node = _sub(container, tag, **_unit_attrs(current, tag, doc))
        _did(_sub(node, "did"), current, doc)
        if tag == "archdesc":
            _part_of(node, current, doc)
        _notes(node, current, doc)
        _access(node, current, doc)
        below = [k for k in doc.tree.children.get(current.key, []) if k in doc.kept]
        if not below:
            continue
        holder = _sub(node, "dsc") if tag == "archdesc" else node
        stack.extend((holder, "c", doc.tree.records[k]) for k in reversed(below))


def _part_of(archdesc: Element, record: Record, doc: _Doc) -> None:
    """A subtree's root names its parent (``relation arcrole="…isPartOf"``) and its order there,
    so that importing the file back puts it where it was."""
    parents = [k for k in locators(record.items(crosswalk.PART_OF)) if k in doc.tree.records]
    if not parents:
        return
    parent = doc.tree.records[parents[0]]
    relation = _sub(
        _sub(archdesc, "relations"),
        "relation",
        relationtype="resourcerelation",
        arcrole=IS_PART_OF,
        href=_first(parent, crosswalk.IDENTIFIER),
    )
    _sub(relation, "relationentry", _first(parent, crosswalk.TITLE))
    order = _first(record, crosswalk.ORDER)
    if order:
        _sub(relation, "relationentry", order, localtype="order")


def _unit_attrs(record: Record, tag: str, doc: _Doc) -> dict[str, str]:
    attrs: dict[str, str] = {}
    level = _first(record, crosswalk.LEVEL)
    if level in LEVELS:
        attrs["level"] = level
    elif level:
        attrs["level"], attrs["otherlevel"] = "otherlevel", level
    elif tag == "archdesc":  # required there: a subtree's root may have none
        attrs["level"], attrs["otherlevel"] = "otherlevel", crosswalk.NO_LEVEL
    own = (_first(record, crosswalk.IDENTIFIER) or "").partition("#")[2]
    if tag == "c" and _NCNAME.match(own) and own not in doc.ids:
        doc.ids.add(own)
        attrs["id"] = own
    if doc.tree.restricted(record.key):
        attrs["audience"] = "internal"
    return attrs


def _did(did: Element, record: Record, doc: _Doc) -> None:
    types: dict[str, str] = {}
    for typed in _texts(record, crosswalk.TYPED_UNITID):
        kind, _, code = typed.partition(": ")
        types.setdefault(code, kind)
    for code in _texts(record, crosswalk.UNITID):
        _sub(did, "unitid", code, localtype=types.get(code, ""))
    for item in record.items(crosswalk.TITLE):
        _sub(did, "unittitle", str(item.get("value")), **_lang(item, doc))
    _dates(did, record)
    for item in record.items(crosswalk.EXTENT):
        _sub(did, "physdesc", str(item.get("value")), **_lang(item, doc))
    for text in _texts(record, crosswalk.CONTAINER):
        for part in text.split(", "):
            match = _CONTAINER.match(part)
            kind, value = (match.group(1).lower(), match.group(2)) if match else ("", part)
            _sub(did, "container", value, localtype=kind)
    for item in record.items(crosswalk.ABSTRACT):
        _sub(did, "abstract", str(item.get("value")), **_lang(item, doc))
    for href in _texts(record, crosswalk.DAO):
        _sub(did, "dao", daotype="unknown", href=href)
    creators = _authority_nodes(record, crosswalk.CREATORS, doc)
    if creators:
        origination = _sub(did, "origination")
        for name, text, identifier in creators:
            _name(origination, name, text, identifier)
    if len(did) == 0:
        _sub(did, "unittitle")


def _dates(did: Element, record: Record) -> None:
    start, end = _first(record, crosswalk.FROM), _first(record, crosswalk.TO)
    written = _texts(record, crosswalk.DATES)
    if start and not end and not written:  # one date: from and to the same
        end = start
    normal = f"{start}/{end}" if start and end else ""  # no range claimed without its end
    for number, text in enumerate(written):
        _sub(did, "unitdate", text, normal=normal if number == 0 else "")
    if written or not start:
        return
    span = _sub(_sub(did, "unitdatestructured"), "daterange")
    _sub(span, "fromdate", start, standarddate=start)
    _sub(span, "todate", end, standarddate=end)


def _notes(node: Element, record: Record, doc: _Doc) -> None:
    for tipo in NOTE_ORDER:
        for item in record.items(tipo):
            note = _sub(node, NOTE_NAMES[tipo], **_lang(item, doc))
            for paragraph in str(item.get("value")).split("\n\n"):
                _sub(note, "p", paragraph)


def _access(node: Element, record: Record, doc: _Doc) -> None:
    points = [
        *_authority_nodes(record, crosswalk.NAMES, doc),
        *_authority_nodes(record, crosswalk.PLACES_FIELD, doc),
        *_authority_nodes(record, crosswalk.SUBJECTS_FIELD, doc),
    ]
    if points:
        block = _sub(node, "controlaccess")
        for name, text, identifier in points:
            _name(block, name, text, identifier)


def _name(parent: Element, name: str, text: str, identifier: str) -> None:
    _sub(_sub(parent, name, identifier=identifier), "part", text)


def _authority_nodes(record: Record, tipo: str, doc: _Doc) -> list[tuple[str, str, str]]:
    """``(element, name, authority id)`` for each authority the field links to."""
    found: list[tuple[str, str, str]] = []
    for key in locators(record.items(tipo)):
        target = doc.authorities.get(key)
        if target is None:
            continue
        if key.section_tipo == "agent1":
            kind = _first(target, "agent4") or "person"
            entry = (AGENT_ELEMENTS.get(kind, "persname"), "agent2", "agent10")
        elif key.section_tipo == "place1":
            entry = ("geogname", "place2", "place3")
        else:
            kind = _first(target, "subject3") or "subject"
            entry = (kind if kind in crosswalk.SUBJECT_KINDS else "subject", "subject2", "subject4")
        text = target.text(entry[1]) or ""
        if text:
            found.append((entry[0], text, _first(target, entry[2]) or ""))
    return found


def _lang(item: Mapping[str, object], doc: _Doc) -> dict[str, str]:
    """``{"lang": code}`` for a value declared in another language than the document's."""
    lang = str(item.get("lang") or NEUTRAL_LANG)
    if item.get("lang_guessed") or lang in (NEUTRAL_LANG, doc.lang):
        return {}
    return {"lang": _code(lang)}


def _first(record: Record, tipo: str) -> str:
    texts = _texts(record, tipo)
    return texts[0] if texts else ""


def _texts(record: Record, tipo: str) -> list[str]:
    return [str(i.get("value")) for i in record.items(tipo) if i.get("value") not in (None, "")]


def _write(
    documents: list[tuple[str, etree._ElementTree]], out: Path, summary: ExportSummary
) -> None:
    """One document to the file ``out``; several (or ``out`` a folder) into ``out``."""
    out = out.expanduser()
    if not documents:
        summary.notes.append(Phrase.of("nothing to write: no record was selected"))
        return
    if len(documents) == 1 and not out.is_dir():
        _save(documents[0][1], writable(out))
        return
    one_file_each(out, len(documents))
    names: set[str] = set()
    for eadid, document in documents:
        stem = eadid[:-4] if eadid.lower().endswith(".xml") else eadid  # UW: "X.xml"
        name = _UNSAFE.sub("_", stem).strip("._") or "ead"
        while name in names:
            name += "_"
        names.add(name)
        _save(document, writable(out / f"{name}.xml"))
    count = len(documents)
    summary.notes.append(Phrase.of(FINDING_AIDS.template(count), n=count, out=str(out)))


def _save(document: etree._ElementTree, path: Path) -> None:
    try:
        document.write(str(path), xml_declaration=True, encoding="UTF-8", pretty_print=True)
    except OSError as exc:
        raise unwritable(path, exc) from exc
