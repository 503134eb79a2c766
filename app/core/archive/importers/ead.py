"""Importer of EAD finding aids (EAD 2002 with or without namespace, EAD3) into ``ead1``.

PATH is one EAD file or a folder searched recursively for ``*.xml``. A file may be a bare
``<ead>`` (EAD 2002 with a relative DOCTYPE, namespaced EAD 2002, EAD3) or an OAI-PMH
response wrapping one or more (ArchivesSpace's ``oai_ead``). Every file is parsed through
:mod:`.safe_xml`; a file that cannot be parsed is reported as a :class:`Skip` with its code and
nothing of it is written.

The whole hierarchy becomes records of section ``ead1`` (source ``ead``): the ``archdesc``
under external id ``EADID`` and every component (``c``, ``c01`` … ``c12``) under
``EADID#COMPONENT_ID``; a component without ``@id`` gets its position (``EADID#c1.3.2``: the
second child of the third child of the first top-level component). Each record names its
parent ("part of") and its order among its siblings. An EAD3 subtree exported by Arxiu
(``recordid`` ``EADID#ID``, ``relations/relation`` ``isPartOf`` its parent) keeps its
components' ids and goes back under that parent when the archive has it.

======  ======================  ========  ===================================================
tipo    label                   kind      from
======  ======================  ========  ===================================================
ead2    title                   text      ``did/unittitle`` (each one an item)
ead3    reference code          text      ``did/unitid`` (each one)
ead4    typed reference code    text      ``TYPE: CODE`` for a ``unitid`` with ``@type``
ead5    level                   text      ``@level`` (``@otherlevel`` when ``otherlevel``)
ead6    dates                   text      ``did/unitdate`` as written
ead7    from                    date      earliest start of any ``unitdate/@normal`` (ISO)
ead8    to                      date      latest end of any ``unitdate/@normal`` (ISO)
ead9    extent                  text      ``physdesc/extent`` (``physdesc`` text without one)
ead10   container               text      ``did/container`` as ``Box 3, Folder 12``
ead11   scope and content       text      ``scopecontent`` (paragraphs)
ead12   biographical history    text      ``bioghist``
ead13   arrangement             text      ``arrangement``
ead14   acquisition             text      ``acqinfo``
ead15   custodial history       text      ``custodhist``
ead16   related material        text      ``relatedmaterial``
ead17   conditions of access    text      ``accessrestrict`` (see :func:`closes_access`)
ead18   part of                 relation  the parent record (``ead1``)
ead19   order                   number    position among the parent's components (1, 2…)
ead20   finding aid             text      the finding aid's ``titleproper``, then its EADID
ead21   creators                relation  ``origination`` names → ``agent1``
ead22   subject names           relation  ``controlaccess`` persname/famname/corpname
ead23   places                  relation  ``controlaccess/geogname`` → ``place1``
ead24   subjects                relation  subject/genreform/function/occupation
ead25   digital objects         iri       ``dao``/``daoloc`` hrefs (never downloaded)
ead26   identifier              text      the record's external id (``FRAN_IR_003500#d_1``)
ead27   abstract                text      ``did/abstract``
ead28   source file             text      the file it was imported from
======  ======================  ========  ===================================================

Names, places and subjects are linked through
:func:`~app.core.archive.importers.authorities.ensure_authorities` (one record per
``@authfilenumber``, EAD3 ``@identifier``, else per folded name; MARC ``$d`` markers
stripped). A bare-number authority id (a local id, as in the University of Washington files)
is qualified with the finding aid's agency code (``wau-ar:75657``) so that two institutions'
local numbers never meet.

Languages: ``xml:lang`` or EAD3 ``@lang`` on an element, else the finding aid's
``langusage/language/@langcode`` (EAD3 ``languagedeclaration``), else one guess per file from
its titles and scope notes (:func:`~app.core.archive.language.guess_import_lang`), stored with
``lang_guessed``. A record is restricted when its ``accessrestrict`` closes the material
(:func:`closes_access`), when it is marked ``audience="internal"``, or, without an
``accessrestrict`` of its own, when its parent is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive import records
from app.core.archive.bulk import NewRecord
from app.core.archive.importers import safe_xml
from app.core.archive.importers.access import closes_access
from app.core.archive.importers.authorities import (
    AGENTS,
    PLACES,
    SUBJECTS,
    Mention,
    clean_name,
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
    ensure_schema,
    external_keys,
    put,
    report_file,
)
from app.core.archive.importers.dates import format_point, written_point
from app.core.archive.importers.ead_fields import (
    ABSTRACT,
    AGENT_KINDS,
    CONTAINER,
    CREATORS,
    DAO,
    DATES,
    EXTENT,
    FINDING_AID,
    FROM,
    IDENTIFIER,
    LEVEL,
    NAMES,
    NO_LEVEL,
    NOTES,
    ORDER,
    PART_OF,
    PLACES_FIELD,
    SCHEMA,
    SECTION,
    SOURCE,
    SOURCE_FILE,
    SUBJECT_KINDS,
    SUBJECTS_FIELD,
    TITLE,
    TO,
    TYPED_UNITID,
    UNITID,
)
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.safe_xml import Element, attr, child, children, local, text_of
from app.core.archive.language import guess_import_lang
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.errors import ImportFailed

if TYPE_CHECKING:
    from app.core.archive.store import Archive

NOT_EAD = "import.not_ead"
"""A well-formed XML file with no ``<ead>`` element in it."""
DATE_UNREADABLE = "import.date_unreadable"
"""A ``unitdate/@normal`` that is not an ISO 8601 date or range (the text is still kept)."""
COMPONENT = re.compile(r"^c(?:0[1-9]|1[0-2])?$")
"""Local names of EAD components: ``c`` and ``c01`` … ``c12``."""
_ISO = re.compile(r"^(\d{4})(?:-?(\d{2})(?:-?(\d{2}))?)?$")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


# -- languages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lang:
    """The language of a value: an archive code, and whether it was guessed from the text."""

    code: str = NEUTRAL_LANG
    guessed: bool = False


def ead_lang(code: str) -> str:
    """The archive's code for an EAD language code (``fre`` → ``lg-fra``, ``en`` → ``lg-eng``)."""
    return archive_lang(code)


def own_lang(node: Element, inherited: Lang) -> Lang:
    """The language ``node`` declares itself (``xml:lang``, EAD3 ``@lang``), else ``inherited``."""
    code = node.get(_XML_LANG) or node.get("lang") or ""
    return Lang(ead_lang(code)) if code.strip() else inherited


def put_text(values: Values, tipo: str, text: str, lang: Lang) -> None:
    """Add ``text`` (when not empty) in ``lang``, marked ``lang_guessed`` when it was guessed."""
    if not text:
        return
    item: dict[str, Any] = {"lang": lang.code, "value": text}
    if lang.guessed:
        item["lang_guessed"] = True
    values.setdefault(tipo, []).append(item)


# -- the finding aid ------------------------------------------------------------------------------


@dataclass
class Doc:
    """One ``<ead>`` being imported: its id, title, language and file."""

    eadid: str
    title: str
    file: str
    agency: str = ""
    base: str = ""
    """The EADID components are named after: ``eadid`` up to a ``#`` (an exported subtree's
    ``recordid`` is its root's identifier, ``FRAN_IR_003500#d_1_2``)."""
    lang: Lang = field(default_factory=Lang)
    skipped: list[Skip] = field(default_factory=list)


@dataclass
class Unit:
    """The archdesc or one component, placed in the hierarchy."""

    node: Element
    external_id: str
    parent: str | None
    order: int


@dataclass
class Described:
    """What one unit says: its values (relations still to resolve) and its restriction."""

    values: Values
    mentions: list[tuple[str, Mention]] = field(default_factory=list)
    restricted: bool | None = None
    """``True``/``False`` from its own ``accessrestrict``; ``None`` without one."""
    media: int = 0
    part_of: tuple[str, int] | None = None
    """An exported subtree's archdesc: its parent's external id and its order there."""


def import_ead(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import the EAD file at ``path``, or every ``*.xml`` under the folder ``path``."""
    files = ead_files(path)
    summary = ImportSummary(kind="ead", path=str(path))
    ensure_schema(archive, SCHEMA)
    ensure_authority_schema(archive)
    run = ImportRun(archive, summary, SOURCE)
    keys = Keys.of(archive)
    seen: dict[str, str] = {}
    for number, file in enumerate(files, start=1):
        report_file(progress, file.name)
        for ead in _documents(file, summary):
            _import_document(archive, run, ead, file, seen, keys)
        if progress is not None:
            progress(number, len(files))
    run.flush()
    return summary


@dataclass
class Keys:
    """Record keys of the import's external ids: the existing record, else the next free id.

    Read once per import (not once per file), so that a folder of finding aids does not read
    the whole ``external_ids`` table again for each one.
    """

    known: dict[str, RecordKey]
    next_id: int
    authorities: dict[str, RecordKey] | None = None
    """The authority records met so far in this import (see ``ensure_authorities``)."""

    @classmethod
    def of(cls, archive: Archive) -> Keys:
        """The keys already in ``archive`` (source ``ead``) and the section's next id."""
        known = external_keys(archive, SOURCE)
        with archive.db.reading() as conn:
            next_id = records.next_id(conn, SECTION)  # above deleted ids too: never reused
        return cls(known, next_id)

    def reserve(self, ids: list[str]) -> dict[str, RecordKey]:
        """The key of every id in ``ids``, new ones numbered after the last."""
        for external_id in ids:
            if external_id not in self.known:
                self.known[external_id] = RecordKey(SECTION, self.next_id)
                self.next_id += 1
        return self.known


def ead_files(path: Path) -> list[Path]:
    """The file ``path``, or every ``*.xml`` below the folder ``path`` (sorted).

    Raises:
        ImportFailed: ``import.file_missing`` when there is nothing at ``path``.
    """
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*.xml") if p.is_file())
    raise ImportFailed(
        "import.file_missing",
        f"There is no EAD file or folder at {path}.",
        hint="Give an EAD .xml file or a folder of them.",
        details={"path": str(path)},
    )


def _documents(file: Path, summary: ImportSummary) -> list[Element]:
    """The ``<ead>`` elements of ``file`` (a skip, and none, when it cannot be read)."""
    try:
        root = safe_xml.parse_file(file)
    except ImportFailed as exc:
        line = int(exc.details.get("line", 0) or 0)
        summary.skipped.append(Skip(line, exc.message, file.name, exc.code))
        return []
    found = [root] if local(root) == "ead" else list(safe_xml.descendants(root, "ead"))
    if not found:
        reason = f"no <ead> element (the root is <{local(root)}>)"
        summary.skipped.append(Skip(_line(root), reason, file.name, NOT_EAD))
    return found


def _import_document(
    archive: Archive, run: ImportRun, ead: Element, file: Path, seen: dict[str, str], keys: Keys
) -> None:
    """Import one ``<ead>``: reserve its keys, link its names, queue its records."""
    summary = run.summary
    doc = read_header(ead, file)
    if doc.eadid in seen:
        reason = f"finding aid {doc.eadid!r} already imported from {seen[doc.eadid]}"
        summary.skipped.append(Skip(_line(ead), reason, file.name, DUPLICATE))
        return
    seen[doc.eadid] = file.name
    archdesc = child(ead, "archdesc")
    if archdesc is None:
        reason = "no <archdesc> in the finding aid"
        summary.skipped.append(Skip(_line(ead), reason, file.name, NOT_EAD))
        return
    units = list(hierarchy(archdesc, doc))
    if doc.lang.code == NEUTRAL_LANG:
        doc.lang = guessed_lang(units)
    described = [describe(unit.node, doc) for unit in units]
    link = described[0].part_of
    if link is not None and link[0] in keys.known and link[0] not in {u.external_id for u in units}:
        units[0].parent, units[0].order = link  # an exported subtree, back under its parent
    mentions = [m for d in described for _, m in d.mentions]
    authorities = keys.authorities = ensure_authorities(
        archive, mentions, file.name, keys.authorities
    )
    reserved = keys.reserve([u.external_id for u in units])
    restricted: dict[str, bool] = {}
    for unit, info in zip(units, described, strict=True):
        closed = _restricted(unit, info, restricted)
        restricted[unit.external_id] = closed
        built = _built(unit, info, doc, reserved, authorities, closed)
        run.add(built, _line(unit.node), file.name)
        summary.read += 1
        summary.media += info.media
    summary.skipped.extend(doc.skipped)


def _line(node: Element) -> int:
    """The line ``node`` starts on (0 when lxml does not know)."""
    line = node.sourceline
    return line if isinstance(line, int) else 0


def _restricted(unit: Unit, info: Described, known: dict[str, bool]) -> bool:
    """Own ``accessrestrict`` or ``audience="internal"`` decides; else the parent's state."""
    if unit.node.get("audience") == "internal":
        return True
    if info.restricted is not None:
        return info.restricted
    return known.get(unit.parent or "", False)


def read_header(ead: Element, file: Path) -> Doc:
    """The finding aid's id, title, agency and declared language (EAD 2002 or EAD3)."""
    header = child(ead, "eadheader", "control")
    eadid_node = child(header, "eadid", "recordid") if header is not None else None
    eadid = text_of(eadid_node) or file.stem.split(".")[0]
    title = ""
    code = ""
    if header is not None:
        titles = list(safe_xml.descendants(header, "titleproper"))
        chosen = [t for t in titles if t.get("type") != "filing"] or titles
        title = text_of(chosen[0]) if chosen else ""
        for language in safe_xml.descendants(header, "language"):
            code = language.get("langcode") or ""
            if code:
                break
    agency = attr(eadid_node, "mainagencycode") if eadid_node is not None else ""
    maintenance = child(header, "maintenanceagency") if header is not None else None
    if not agency and maintenance is not None:
        agency = text_of(child(maintenance, "agencycode"))
    code = ead.get(_XML_LANG) or ead.get("lang") or code  # the root's own language first
    lang = Lang(ead_lang(code)) if code.strip() else Lang()
    if not title:
        title = text_of(_first_title(ead))
    base = eadid.partition("#")[0]
    return Doc(eadid=eadid, title=title, file=file.name, agency=agency, base=base, lang=lang)


def _first_title(ead: Element) -> Element | None:
    archdesc = child(ead, "archdesc")
    did = child(archdesc, "did") if archdesc is not None else None
    return child(did, "unittitle") if did is not None else None


def guessed_lang(units: list[Unit]) -> Lang:
    """One language for a finding aid that declares none, guessed from its titles and scope."""
    parts: list[str] = []
    size = 0
    for unit in units:
        did = child(unit.node, "did")
        titles = list(children(did, "unittitle")) if did is not None else []
        for node in [*titles, *children(unit.node, "scopecontent")]:
            text = text_of(node)
            parts.append(text)
            size += len(text) + 1
        if size >= 4000:
            break
    guess = guess_import_lang(" ".join(parts))
    return Lang(guess, guessed=True) if guess else Lang()


def hierarchy(archdesc: Element, doc: Doc) -> Iterator[Unit]:
    """The archdesc, then every component depth first in document order, each placed."""
    yield Unit(archdesc, doc.eadid, None, 1)
    used: dict[str, int] = {}
    stack: list[tuple[Element, str, str, int]] = []
    top = [c for dsc in children(archdesc, "dsc") for c in _components(dsc)]
    stack.extend((node, doc.eadid, str(i), i) for i, node in reversed(list(enumerate(top, 1))))
    while stack:
        node, parent, position, order = stack.pop()
        external_id = _component_id(node, position, doc, used)
        yield Unit(node, external_id, parent, order)
        below = list(enumerate(_components(node), 1))
        stack.extend((c, external_id, f"{position}.{i}", i) for i, c in reversed(below))


def _components(node: Element) -> Iterator[Element]:
    for item in children(node):
        if COMPONENT.match(local(item)):
            yield item


def _component_id(node: Element, position: str, doc: Doc, used: dict[str, int]) -> str:
    """``EADID#@id``, or ``EADID#cPOSITION`` without a usable (unique) ``@id``."""
    own = (node.get("id") or "").strip()
    line = _line(node)
    if own and own in used:
        reason = (
            f"duplicate component id {own!r} (first on line {used[own]}): imported as c{position}"
        )
        doc.skipped.append(Skip(line, reason, doc.file, DUPLICATE))
        own = ""
    if own:
        used[own] = line
        return f"{doc.base}#{own}"
    return f"{doc.base}#c{position}"


# -- one unit -----------------------------------------------------------------------------------


def describe(node: Element, doc: Doc) -> Described:
    """The values of the archdesc or component ``node`` (relations not yet resolved)."""
    lang = own_lang(node, doc.lang)
    info = Described(values={})
    values = info.values
    level = node.get("level") or ""
    if level == "otherlevel" and node.get("otherlevel"):
        level = node.get("otherlevel") or level
    if level == NO_LEVEL:
        level = ""
    put(values, LEVEL, level.strip() or None)
    did = child(node, "did")
    if did is not None:
        _did(did, info, doc, own_lang(did, lang))
    for block in _note_blocks(node):
        name = local(block)
        if name in NOTES:
            text = blocks_text(block)
            put_text(values, NOTES[name], text, own_lang(block, lang))
            if name == "accessrestrict" and text:
                info.restricted = bool(info.restricted) or closes_access(text)
        elif name == "controlaccess":
            _access_points(block, info, own_lang(block, lang), doc)
        elif name in ("dao", "daogrp", "daoset"):
            _media(block, info)
        elif name == "relations":
            info.part_of = part_of(block) or info.part_of
    return info


def part_of(block: Element) -> tuple[str, int] | None:
    """The ``relation`` with ``@arcrole`` ``…isPartOf`` of an EAD3 ``relations``: the parent's
    external id (``@href``) and the order there (``relationentry localtype="order"``)."""
    for relation in children(block, "relation"):
        href = attr(relation, "href")
        if attr(relation, "arcrole").endswith("isPartOf") and href:
            order = next(
                (
                    text_of(e)
                    for e in children(relation, "relationentry")
                    if e.get("localtype") == "order"
                ),
                "1",
            )
            return href, int(order) if order.isdigit() else 1
    return None


def _note_blocks(node: Element) -> Iterator[Element]:
    """The unit's note elements, those inside ``descgrp`` included."""
    for item in children(node):
        if local(item) == "descgrp":
            yield from children(item)
        else:
            yield item


def _did(did: Element, info: Described, doc: Doc, lang: Lang) -> None:
    values = info.values
    ranges: list[tuple[str, str]] = []
    containers: list[str] = []
    for item in children(did):
        name = local(item)
        if name == "unittitle":
            put_text(values, TITLE, text_of(item), own_lang(item, lang))
            for inner in safe_xml.descendants(item, "unitdate"):
                _unitdate(inner, values, ranges, doc)
        elif name == "unitid":
            _unitid(item, values)
        elif name == "unitdate":
            _unitdate(item, values, ranges, doc)
        elif name == "unitdatestructured":
            ranges.extend(_structured_range(item))
        elif name in ("physdesc", "physdescstructured", "physdescset"):
            for extent in extents(item):
                put_text(values, EXTENT, extent, own_lang(item, lang))
        elif name == "container":
            containers.append(_container(item))
        elif name in ("dao", "daogrp", "daoset"):
            _media(item, info)
        elif name == "origination":
            _names(item, info, CREATORS, doc, own_lang(item, lang))
        elif name == "abstract":
            put_text(values, ABSTRACT, text_of(item), own_lang(item, lang))
    if containers:
        put(values, CONTAINER, ", ".join(c for c in containers if c))
    if ranges:
        put(values, FROM, min(start for start, _ in ranges))
        put(values, TO, max(end for _, end in ranges))


def _unitid(item: Element, values: Values) -> None:
    code = text_of(item)
    if not code:
        return
    put(values, UNITID, code)
    kind = (item.get("type") or item.get("localtype") or "").strip()
    if kind:
        put(values, TYPED_UNITID, f"{kind}: {code}")


def _unitdate(item: Element, values: Values, ranges: list[tuple[str, str]], doc: Doc) -> None:
    put(values, DATES, text_of(item) or None)
    normal = (item.get("normal") or "").strip()
    if not normal.strip("/0 "):  # "/", "0", "0/0": a converter's placeholder for no date
        return
    parsed = iso_range(normal)
    if parsed is None:
        reason = f"unitdate/@normal {normal!r} is not an ISO 8601 date or range"
        doc.skipped.append(Skip(_line(item), reason, doc.file, DATE_UNREADABLE))
    else:
        ranges.append(parsed)


def iso_date(text: str) -> str | None:
    """``1914``, ``1914-08``, ``1914-08-23`` (also written ``19140823``), else ``None``.

    A year with a month name, as converters from MARC often write ``@normal`` (``1989
    October``, ``October 1989``, ``1990 Feb. 3``), is read too.
    """
    match = _ISO.match(text.strip())
    if match is not None:
        return "-".join(part for part in match.groups() if part)
    return _written_date(text)


def _written_date(text: str) -> str | None:
    """A year with a month name and perhaps a day; no other word (``circa 1900`` is not
    an ``@normal``)."""
    point = written_point(text, ignored=frozenset())
    return format_point(point)


def iso_range(normal: str) -> tuple[str, str] | None:
    """The ``(from, to)`` of an EAD ``@normal``: ``1801-01-01/2000-12-31``, ``1914``, or
    several ranges separated by commas (``1846/1846,1898/1932`` → ``1846``–``1932``)."""
    dates: list[str] = []
    for part in normal.split(","):
        start, _, end = part.partition("/")
        first = iso_date(start)
        last = iso_date(end) if end else first
        if first is None or last is None:
            return None
        dates.extend((first, last))
    return min(dates), max(dates)


def _structured_range(item: Element) -> list[tuple[str, str]]:
    """The range of an EAD3 ``unitdatestructured`` from its ``@standarddate`` values."""
    found = [
        iso_date(node.get("standarddate") or "")
        for node in safe_xml.descendants(item, "datesingle", "fromdate", "todate")
    ]
    dates = [d for d in found if d]
    return [(min(dates), max(dates))] if dates else []


def extents(item: Element) -> list[str]:
    """The extents of a ``physdesc`` (its ``extent`` children, else its text), or of an EAD3
    ``physdescstructured`` (``quantity unittype``) or ``physdescset``."""
    name = local(item)
    if name == "physdescset":
        return [e for node in children(item, "physdescstructured") for e in extents(node)]
    if name == "physdescstructured":
        text = f"{text_of(child(item, 'quantity'))} {text_of(child(item, 'unittype'))}"
        return [text.strip()] if text.strip() else []
    found = [text_of(e) for e in children(item, "extent")]
    found = [e for e in found if e]
    if found:
        return found
    text = text_of(item)
    return [text] if text else []


def _container(item: Element) -> str:
    """``Box 3`` for ``<container type="box">3</container>`` (EAD3 ``@localtype``)."""
    value = text_of(item)
    kind = (item.get("type") or item.get("localtype") or "").strip()
    return f"{kind[:1].upper()}{kind[1:].lower()} {value}".strip() if kind else value


def _media(item: Element, info: Described) -> None:
    """Every ``dao``/``daoloc`` href under ``item`` (links only: nothing is downloaded)."""
    nodes = [item, *safe_xml.descendants(item, "dao", "daoloc")]
    for node in nodes:
        if local(node) in ("dao", "daoloc"):
            href = attr(node, "href")
            if href:
                put(info.values, DAO, href)
                info.media += 1


def _access_points(block: Element, info: Described, lang: Lang, doc: Doc) -> None:
    """Names, places and subjects of a ``controlaccess`` (nested ones included)."""
    for item in safe_xml.descendants(block, *AGENT_KINDS, "geogname", *SUBJECT_KINDS):
        name = local(item)
        if name in AGENT_KINDS:
            _add_mention(item, info, NAMES, AGENTS, AGENT_KINDS[name], doc, lang)
        elif name == "geogname":
            _add_mention(item, info, PLACES_FIELD, PLACES, "place", doc, lang)
        else:
            _add_mention(item, info, SUBJECTS_FIELD, SUBJECTS, name, doc, lang)


def _names(block: Element, info: Described, tipo: str, doc: Doc, lang: Lang) -> None:
    for item in children(block, *AGENT_KINDS):
        _add_mention(item, info, tipo, AGENTS, AGENT_KINDS[local(item)], doc, lang)


def _add_mention(
    item: Element, info: Described, tipo: str, section: str, kind: str, doc: Doc, lang: Lang
) -> None:
    name = clean_name(name_text(item))
    if not name:
        return
    number = (item.get("authfilenumber") or item.get("identifier") or "").strip()
    if number.isdigit() and doc.agency:
        number = f"{doc.agency}:{number}"
    mention = Mention(section, kind, name, number, own_lang(item, lang).code)
    info.mentions.append((tipo, mention))


def name_text(item: Element) -> str:
    """A name's text; EAD3 ``<part>``s joined with spaces."""
    parts = [text_of(p) for p in children(item, "part")]
    return " ".join(p for p in parts if p) if parts else text_of(item)


def blocks_text(node: Element) -> str:
    """The text of a note: each paragraph, list item or nested note a line of its own (its
    ``head`` left out)."""
    lines: list[str] = []
    for item in children(node):
        name = local(item)
        if name == "head":
            continue
        if name == "list":
            lines.extend(text_of(entry) for entry in children(item, "item"))
        elif name == local(node) or name in ("p", "note", "blockquote"):
            lines.append(blocks_text(item) if name == local(node) else text_of(item))
        else:
            lines.append(text_of(item))
    lines = [line for line in lines if line]
    if not lines:  # bare text, perhaps after a head
        loose = [node.text or "", *(item.tail or "" for item in node)]
        return " ".join(" ".join(loose).split())
    return "\n\n".join(lines)


# -- the record ---------------------------------------------------------------------------------


def _built(
    unit: Unit,
    info: Described,
    doc: Doc,
    keys: dict[str, RecordKey],
    authorities: dict[str, RecordKey],
    restricted: bool,
) -> Built:
    """The record of ``unit`` with its parent, order, finding aid and authority links."""
    values = info.values
    links = 0
    if unit.parent is not None:
        put(values, PART_OF, keys[unit.parent].to_locator())
        links += 1
    put(values, ORDER, unit.order)
    put_text(values, FINDING_AID, doc.title, doc.lang)
    put(values, FINDING_AID, doc.base)
    seen: set[tuple[str, RecordKey]] = set()
    for tipo, mention in info.mentions:
        target = authorities.get(mention.external_id)
        if target is None or (tipo, target) in seen:
            continue
        seen.add((tipo, target))
        put(values, tipo, target.to_locator())
        links += 1
    put(values, IDENTIFIER, unit.external_id)
    put(values, SOURCE_FILE, doc.file)
    key = keys[unit.external_id]
    record = NewRecord(
        SECTION,
        values,
        external_id=unit.external_id,
        section_id=key.section_id,
        restricted=True if restricted else None,
    )
    return Built(record, links)
