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
ead20   finding aid             text      the finding aid's ``titleproper``, then its EADID (top)
ead21   creators                relation  ``origination`` names → ``agent1``
ead22   subject names           relation  ``controlaccess`` persname/famname/corpname
ead23   places                  relation  ``controlaccess/geogname`` → ``place1``
ead24   subjects                relation  subject/genreform/function/occupation
ead25   digital objects         iri       ``dao``/``daoloc`` hrefs (never downloaded)
ead26   identifier              text      the record's external id (``FRAN_IR_003500#d_1``)
ead27   abstract                text      ``did/abstract``
ead28   source file             text      the file it was imported from (harvested: the OAI id)
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

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive import records
from app.core.archive.bulk import NewRecord
from app.core.archive.importers import safe_xml
from app.core.archive.importers.authorities import ensure_authorities, ensure_authority_schema
from app.core.archive.importers.base import (
    DUPLICATE,
    Built,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    ensure_schema,
    external_keys,
    report_file,
)
from app.core.archive.importers.ead_describe import (
    _XML_LANG,
    Described,
    Doc,
    Lang,
    describe,
    ead_lang,
    first,
    line_of,
    named,
    put_text,
    text,
)
from app.core.archive.importers.ead_describe import iso_range as iso_range
from app.core.archive.importers.ead_fields import (
    FINDING_AID,
    IDENTIFIER,
    ORDER,
    PART_OF,
    SCHEMA,
    SECTION,
    SOURCE,
    SOURCE_FILE,
)
from app.core.archive.importers.items import put
from app.core.archive.importers.safe_xml import Element, attr, child, local, text_of
from app.core.archive.language import guess_import_lang
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

NOT_EAD = "import.not_ead"
"""A well-formed XML file with no ``<ead>`` element in it."""
COMPONENTS = ("c", *(f"c{n:02d}" for n in range(1, 13)))
"""Local names of EAD components: ``c`` and ``c01`` … ``c12``."""
_COMPONENT_TAGS = tuple(f"{{*}}{name}" for name in COMPONENTS)


# -- the finding aid ------------------------------------------------------------------------------


@dataclass
class Unit:
    """The archdesc or one component, placed in the hierarchy."""

    node: Element
    external_id: str
    parent: str | None
    order: int


def import_ead(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import the EAD file at ``path``, or every ``*.xml`` under the folder ``path``."""
    files = ead_files(path)
    summary = ImportSummary(kind="ead", path=str(path), read_unit="records")
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
    def of(cls, archive: Archive, source: str = SOURCE) -> Keys:
        """The keys already in ``archive`` (under ``source``, by default ``ead``; a harvest's is
        its base URL) and the section's next id."""
        known = external_keys(archive, source)
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
        ImportFailed: ``import.file_missing`` when there is nothing at ``path``, or no ``.xml``
            file in the folder (said so, as the EAC-CPF and Dublin Core imports say it, rather
            than an import of nothing).
    """
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.xml") if p.is_file())
        if not files:
            raise ImportFailed(
                "import.file_missing",
                Phrase.of("The folder {path} holds no .xml file.", path=str(path)),
                hint="Give an EAD .xml file or a folder of them.",
                details={"path": str(path)},
            )
        return files
    raise ImportFailed(
        "import.file_missing",
        Phrase.of("There is no EAD file or folder at {path}.", path=str(path)),
        hint="Give an EAD .xml file or a folder of them.",
        details={"path": str(path)},
    )


def _documents(file: Path, summary: ImportSummary) -> list[Element]:
    """The ``<ead>`` elements of ``file`` (a skip, and none, when it cannot be read)."""
    try:
        root = safe_xml.parse_file(file)
    except ImportFailed as exc:
        line = exc.line
        summary.skipped.append(Skip.of_error(line, file.name, exc))
        return []
    found = [root] if local(root) == "ead" else list(safe_xml.descendants(root, "ead"))
    if not found:
        reason = "no <ead> element (the root is <{root}>)"
        summary.skipped.append(Skip.said(_line(root), file.name, NOT_EAD, reason, root=local(root)))
    return found


def import_element(
    archive: Archive, run: ImportRun, ead: Element, origin: str, seen: dict[str, str], keys: Keys
) -> list[str]:
    """Import one parsed ``<ead>`` that is no file of its own (an OAI-PMH record's metadata)
    through the file's crosswalk: ``origin`` (the record's identifier) stands for the file's
    name in skips and in ``ead28``, and is the id of a finding aid without an ``eadid``.

    Returns:
        The external ids of the records queued in ``run`` (none when it was skipped).
    """
    return _import_document(archive, run, ead, origin, seen, keys)


def _import_document(
    archive: Archive,
    run: ImportRun,
    ead: Element,
    file: Path | str,
    seen: dict[str, str],
    keys: Keys,
) -> list[str]:
    """Import one ``<ead>``: reserve its keys, link its names, queue its records; their ids."""
    summary = run.summary
    doc = read_header(ead, file)
    if doc.eadid in seen:
        reason = "finding aid {id!r} already imported from {first}"
        skip = Skip.said(
            _line(ead), doc.file, DUPLICATE, reason, id=doc.eadid, first=seen[doc.eadid]
        )
        summary.skipped.append(skip)
        return []
    seen[doc.eadid] = doc.file
    archdesc = child(ead, "archdesc")
    if archdesc is None:
        reason = "no <archdesc> in the finding aid"
        summary.skipped.append(Skip.said(_line(ead), doc.file, NOT_EAD, reason))
        return []
    units = list(hierarchy(archdesc, doc))
    if doc.lang.code == NEUTRAL_LANG:
        doc.lang = guessed_lang(units)
    described = [describe(unit.node, doc) for unit in units]
    link = described[0].part_of
    if link is not None and link[0] in keys.known and link[0] not in {u.external_id for u in units}:
        units[0].parent, units[0].order = link  # an exported subtree, back under its parent
    mentions = [m for d in described for _, m in d.mentions]
    authorities = keys.authorities = ensure_authorities(
        archive, mentions, doc.file, keys.authorities, summary
    )
    reserved = keys.reserve([u.external_id for u in units])
    restricted: dict[str, bool] = {}
    for unit, info in zip(units, described, strict=True):
        closed = _restricted(unit, info, restricted)
        restricted[unit.external_id] = closed
        built = _built(unit, info, doc, reserved, authorities, closed)
        run.add(built, _line(unit.node), doc.file)
        summary.read += 1
        summary.media_linked += info.media
    summary.skipped.extend(doc.skipped)
    return [unit.external_id for unit in units]


_line = line_of


def _restricted(unit: Unit, info: Described, known: dict[str, bool]) -> bool:
    """Own ``accessrestrict`` or ``audience="internal"`` decides; else the parent's state."""
    if unit.node.get("audience") == "internal":
        return True
    if info.restricted is not None:
        return info.restricted
    return known.get(unit.parent or "", False)


def read_header(ead: Element, file: Path | str) -> Doc:
    """The finding aid's id, title, agency and declared language (EAD 2002 or EAD3).

    ``file`` is the file it was read from, or the name of where it came from (an OAI-PMH
    identifier), which is then also the id of a finding aid without one.
    """
    name, stem = (file, file) if isinstance(file, str) else (file.name, file.stem.split(".")[0])
    header = child(ead, "eadheader", "control")
    eadid_node = child(header, "eadid", "recordid") if header is not None else None
    eadid = text_of(eadid_node) or stem
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
    return Doc(eadid=eadid, title=title, file=name, agency=agency, base=base, lang=lang)


def _first_title(ead: Element) -> Element | None:
    archdesc = child(ead, "archdesc")
    did = child(archdesc, "did") if archdesc is not None else None
    return child(did, "unittitle") if did is not None else None


def guessed_lang(units: list[Unit]) -> Lang:
    """One language for a finding aid that declares none, guessed from its titles and scope."""
    parts: list[str] = []
    size = 0
    for unit in units:
        did = first(unit.node, "did")
        titles = list(named(did, "unittitle")) if did is not None else []
        for node in [*titles, *named(unit.node, "scopecontent")]:
            found = text(node)
            parts.append(found)
            size += len(found) + 1
        if size >= 4000:
            break
    guess = guess_import_lang(" ".join(parts))
    return Lang(guess, guessed=True) if guess else Lang()


def hierarchy(archdesc: Element, doc: Doc) -> Iterator[Unit]:
    """The archdesc, then every component depth first in document order, each placed."""
    yield Unit(archdesc, doc.eadid, None, 1)
    used: dict[str, int] = {}
    stack: list[tuple[Element, str, str, int]] = []
    top = [c for dsc in named(archdesc, "dsc") for c in _components(dsc)]
    stack.extend((node, doc.eadid, str(i), i) for i, node in reversed(list(enumerate(top, 1))))
    while stack:
        node, parent, position, order = stack.pop()
        external_id = _component_id(node, position, doc, used)
        yield Unit(node, external_id, parent, order)
        below = list(enumerate(_components(node), 1))
        stack.extend((c, external_id, f"{position}.{i}", i) for i, c in reversed(below))


def _components(node: Element) -> Iterator[Element]:
    """The child components of ``node`` (``c``, ``c01`` … ``c12``), in document order."""
    return node.iterchildren(*_COMPONENT_TAGS)


def _component_id(node: Element, position: str, doc: Doc, used: dict[str, int]) -> str:
    """``EADID#@id``, or ``EADID#cPOSITION`` without a usable (unique) ``@id``."""
    own = (node.get("id") or "").strip()
    line = _line(node)
    if own and own in used:
        reason = "duplicate component id {id!r} (first on line {first}): imported as c{position}"
        skip = Skip.said(
            line, doc.file, DUPLICATE, reason, id=own, first=used[own], position=position
        )
        doc.skipped.append(skip)
        own = ""
    if own:
        used[own] = line
        return f"{doc.base}#{own}"
    return f"{doc.base}#c{position}"


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
    if unit.parent is None:  # the finding aid's own record; a unit's trail names its papers
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
