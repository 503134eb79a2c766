"""Authority records shared by every standards importer: agents, places and subjects.

An EAD finding aid names its creators and subjects (``origination``, ``controlaccess``), an
EAC-CPF file describes those agents in full, a Dublin Core record names a creator and subjects,
a CSV has a "creator" column. All of them meet in three sections, so that one person is **one
record** however many files mention them:

========  =============================================  ==========================================
section   what                                           label field
========  =============================================  ==========================================
agent1    persons, families and corporate bodies         agent2 (the authorised name)
place1    places                                         place2
subject1  subjects, genres, functions, occupations       subject2
========  =============================================  ==========================================

Every authority record is imported under the source :data:`SOURCE` with an external id made by
:func:`authority_id`: the authority file number when the source gives one (``FRAN_NP_050218``,
an EAD ``@authfilenumber``, an EAC-CPF ``recordId``), else ``name:KIND:normalised name``. The
EAD importer calls :func:`ensure_authorities` for the names it meets, which creates only the
missing ones (a mention never overwrites a full EAC-CPF record); the EAC-CPF importer upserts its
records under the same ids, so a stub created by a mention becomes the full record.

Fields of ``agent1``:

=======  ===================  ========  =====================================================
tipo     label                kind      value
=======  ===================  ========  =====================================================
agent2   name                 text      the authorised form (``Vitet (famille)``)
agent3   other names          text      every other form (variants, acronyms), one item each
agent4   entity type          text      ``person`` | ``family`` | ``corporateBody``
agent5   dates                text      existence dates as written (``1701-1900``)
agent6   from                 date      ISO start of existence (``1701``)
agent7   to                   date      ISO end of existence
agent8   places               relation  → ``place1``
agent9   history              text      biography or history (``biogHist``), paragraphs
agent10  identifier           text      the authority id (``FRAN_NP_050218``) and other ids
agent11  related agents       relation  → ``agent1`` (``cpfRelation``)
agent12  relations            text      ``type: name (target id)`` for each ``cpfRelation``, then
                                        `` [from – to]`` when it has dates
                                        (``hierarchical-parent: … Direction de l'architecture
                                        et du patrimoine (1998-2010) (FRAN_NP_005406)``)
agent13  created              relation  → ``ead1`` descriptions it created (``creatorOf``)
agent14  subject of           relation  → ``ead1`` descriptions about it (``subjectOf``)
agent15  functions            text      functions, occupations, legal status, mandates
agent16  source               text      the file it was imported from
agent17  structure            text      internal structure or genealogy, paragraphs
agent18  resources            text      ``type: title (href)`` for each ``resourceRelation``
agent19  agency               text      the agency that maintains the authority record
=======  ===================  ========  =====================================================

``agent15`` items say which element they come from: ``function: culture``, ``occupation:
député``, ``legalStatus: …``, ``mandate: …``. ``agent10`` holds the record id first, then
``entityId`` values as ``TYPE: value`` (``ISNI: 0000000120988173``), then the URIs of
``identity`` relations (BnF, Wikipedia).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.archive.access_points import AGENTS as AGENTS
from app.core.archive.access_points import AUTHORITY_SECTIONS as AUTHORITY_SECTIONS
from app.core.archive.access_points import PLACES as PLACES
from app.core.archive.access_points import SUBJECTS as SUBJECTS
from app.core.archive.bulk import NewRecord, UpsertResult
from app.core.archive.importers.base import (
    ImportSummary,
    Schema,
    Values,
    ensure_schema,
    external_keys,
    labels,
    put,
    schema_field,
)
from app.core.archive.model import RecordKey, Section

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SOURCE = "authority"
DESCRIPTIONS = "ead1"
"""The archival descriptions' section (fonds, series, files, items), made by the EAD importer."""

AGENT_KINDS = ("person", "family", "corporateBody")
ENTITY_TYPE = "agent4"
"""The agents' entity type field (one of :data:`AGENT_KINDS`, as EAC-CPF writes it)."""
SUBJECT_KIND = "subject3"
"""The subjects' kind field (EAD's ``subject``, ``genreform``, ``function``, ``occupation``)."""
MARC_SUBFIELD = re.compile(r"\$[a-z0-9]")
MARC_SUBDIVISION = re.compile(r"\s*\$(?:[vxyz]|(?=[A-ZÀ-ÖØ-Þ]))\s*")
"""A heading's form, general, chronological or geographic subdivision (``$v``, ``$x``, ``$y``,
``$z``), shown as `` -- `` the way LCSH headings are read (``Labor unions -- Washington
(State) -- Seattle``); so is a ``$`` whose code letter was left out before a capital
(``Washington (State)$Seattle`` in a UW finding aid: subfield codes are lower case)."""
SUBDIVISION = " -- "
_LOOSE_DASHES = re.compile(r"^(?:\s*--)+\s*|\s*(?:--\s*)+$")
"""A subdivision mark with nothing before or after it (``$zSeattle``, ``Labor$z``)."""
_SPACE = re.compile(r"\s+")

_a = functools.partial(schema_field, AGENTS)
_p = functools.partial(schema_field, PLACES)
_s = functools.partial(schema_field, SUBJECTS)

SCHEMA = Schema(
    sections=(
        Section(
            AGENTS,
            labels(
                "Persons, families and corporate bodies",
                "Persones, famílies i entitats",
                "Personas, familias y entidades",
            ),
            "Authority records (ISAAR-CPF / EAC-CPF): who created or is the subject of records.",
            label_field="agent2",
        ),
        Section(
            PLACES,
            labels("Places (access points)", "Llocs (punts d'accés)", "Lugares (puntos de acceso)"),
            "Places named by archival descriptions and authority records.",
            label_field="place2",
        ),
        Section(
            SUBJECTS,
            labels("Subjects", "Matèries", "Materias"),
            "Subjects, genres, functions and occupations used as access points.",
            label_field="subject2",
        ),
    ),
    fields=(
        _a("agent2", ("Name", "Nom", "Nombre"), multilingual=True),
        _a("agent3", ("Other names", "Altres noms", "Otros nombres"), multilingual=True),
        _a(ENTITY_TYPE, ("Entity type", "Tipus d'entitat", "Tipo de entidad")),
        _a("agent5", ("Dates", "Dates", "Fechas")),
        _a("agent6", ("From", "Des de", "Desde"), "date"),
        _a("agent7", ("To", "Fins a", "Hasta"), "date"),
        _a("agent8", ("Places", "Llocs", "Lugares"), "relation", target_section=PLACES),
        _a("agent9", ("History", "Història", "Historia"), multilingual=True),
        _a("agent10", ("Identifier", "Identificador", "Identificador")),
        _a(
            "agent11",
            ("Related agents", "Agents relacionats", "Agentes relacionados"),
            "relation",
            target_section=AGENTS,
        ),
        _a("agent12", ("Relations", "Relacions", "Relaciones"), multilingual=True),
        _a(
            "agent13",
            ("Created", "Productor de", "Productor de"),
            "relation",
            target_section=DESCRIPTIONS,
        ),
        _a(
            "agent14",
            ("Subject of", "Matèria de", "Materia de"),
            "relation",
            target_section=DESCRIPTIONS,
        ),
        _a("agent15", ("Functions", "Funcions", "Funciones"), multilingual=True),
        _a("agent16", ("Source file", "Fitxer d'origen", "Fichero de origen")),
        _a(
            "agent17",
            ("Structure or genealogy", "Estructura o genealogia", "Estructura o genealogía"),
            multilingual=True,
        ),
        _a("agent18", ("Related resources", "Recursos relacionats", "Recursos relacionados")),
        _a(
            "agent19",
            ("Maintenance agency", "Institució responsable", "Institución responsable"),
        ),
        _p("place2", ("Name", "Nom", "Nombre"), multilingual=True),
        _p("place3", ("Identifier", "Identificador", "Identificador")),
        _s("subject2", ("Term", "Terme", "Término"), multilingual=True),
        _s(SUBJECT_KIND, ("Kind", "Tipus", "Tipo")),
        _s("subject4", ("Identifier", "Identificador", "Identificador")),
    ),
)


def ensure_authority_schema(archive: Archive) -> None:
    """Create the authority sections and fields that are missing."""
    ensure_schema(archive, SCHEMA)


def clean_name(name: str) -> str:
    """A name as shown: MARC subdivisions as `` -- `` (:data:`MARC_SUBDIVISION`), other
    subfield markers (``$d``) dropped, spaces collapsed, trailing punctuation of MARC headings
    (``Yoneda, Karl G.,$d1906-`` → ``Yoneda, Karl G., 1906-``)."""
    text = MARC_SUBFIELD.sub(" ", MARC_SUBDIVISION.sub(SUBDIVISION, name.strip()))
    text = _SPACE.sub(" ", text).strip()
    text = text.replace(" ,", ",").replace(" .", ".")
    return _LOOSE_DASHES.sub("", text).strip(" ,;")


def fold(name: str) -> str:
    """A matching form of a name: lower case, no accents, letters and digits only."""
    text = unicodedata.normalize("NFKD", clean_name(name).casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.findall(r"\w+", text))


def authority_id(kind: str, name: str, number: str = "") -> str:
    """The external id of an authority record (see the module doc)."""
    number = number.strip()
    if number:
        return number
    return f"name:{kind}:{fold(name)}"


@dataclass(frozen=True)
class Mention:
    """A name met in a description: which section it belongs to, its kind, name and number."""

    section: str
    """``agent1``, ``place1`` or ``subject1``."""
    kind: str
    """For agents ``person`` | ``family`` | ``corporateBody``; for subjects the element name
    (``subject``, ``genreform``, ``function``, ``occupation``); for places ``place``."""
    name: str
    number: str = ""
    lang: str = "lg-nolan"

    @property
    def external_id(self) -> str:
        """This mention's authority id."""
        kind = "agent" if self.section == AGENTS else self.kind
        return authority_id(kind, self.name, self.number)


def stub_record(mention: Mention, source_file: str = "") -> NewRecord:
    """The record a mention creates when its authority is not in the archive yet."""
    values: Values = {}
    name = clean_name(mention.name)
    if mention.section == AGENTS:
        put(values, "agent2", name, mention.lang)
        put(values, ENTITY_TYPE, mention.kind or None)
        put(values, "agent10", mention.number or None)
        put(values, "agent16", source_file or None)
    elif mention.section == PLACES:
        put(values, "place2", name, mention.lang)
        put(values, "place3", mention.number or None)
    else:
        put(values, "subject2", name, mention.lang)
        put(values, SUBJECT_KIND, mention.kind)
        put(values, "subject4", mention.number or None)
    return NewRecord(mention.section, values, external_id=mention.external_id)


def ensure_authorities(
    archive: Archive,
    mentions: Iterable[Mention],
    source_file: str = "",
    known: dict[str, RecordKey] | None = None,
    summary: ImportSummary | None = None,
) -> dict[str, RecordKey]:
    """The record of every mention (by external id), creating only the missing ones.

    Existing authority records are never rewritten here: a full EAC-CPF record stays as it is
    when a finding aid mentions its agent again. An import of many files passes the dict this
    returned for the previous file as ``known`` (updated in place), so that the authority ids
    are read once per import, not once per file. With ``summary``, the stubs written are
    counted in it (``created``, and ``sections`` per authority section) as the import's own.
    """
    if known is None:
        ensure_authority_schema(archive)
        known = external_keys(archive, SOURCE)
    new: dict[str, NewRecord] = {}
    for mention in mentions:
        if mention.name.strip() and mention.external_id not in known:
            new.setdefault(mention.external_id, stub_record(mention, source_file))
    if new:
        result = archive.upsert_records(list(new.values()), source=SOURCE)
        known.update(zip(new, result.keys, strict=True))
        if summary is not None:
            count_stubs(summary, list(new.values()), result)
    return known


def count_stubs(summary: ImportSummary, stubs: list[NewRecord], result: UpsertResult) -> None:
    """Count the stub records one upsert wrote into ``summary`` (as a batch of the import)."""
    summary.created += result.created
    summary.updated += result.updated
    summary.unchanged += result.unchanged
    summary.named += len(stubs)
    summary.sections.update(stub.section_tipo for stub in stubs)
