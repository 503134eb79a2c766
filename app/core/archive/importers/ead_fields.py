"""The ``ead1`` section's fields: what the EAD importer writes and the EAD3 exporter reads.

The crosswalk table is in :mod:`app.core.archive.importers.ead` and ``docs/importing.md``.
"""

from __future__ import annotations

import functools

from app.core.archive.importers.authorities import AGENTS, DESCRIPTIONS, PLACES, SUBJECTS
from app.core.archive.importers.base import schema_field, section_schema

SOURCE = "ead"
SECTION = DESCRIPTIONS
EAD3_NS = "http://ead3.archivists.org/schema/"

NO_LEVEL = "unspecified"
"""The ``@otherlevel`` an EAD3 export gives an archdesc that has no level (EAD3 requires one);
read back as no level."""

TITLE, UNITID, TYPED_UNITID, LEVEL, DATES, FROM, TO, EXTENT, CONTAINER = (
    "ead2", "ead3", "ead4", "ead5", "ead6", "ead7", "ead8", "ead9", "ead10",
)  # fmt: skip
PART_OF, ORDER, FINDING_AID, CREATORS, NAMES, PLACES_FIELD, SUBJECTS_FIELD, DAO = (
    "ead18", "ead19", "ead20", "ead21", "ead22", "ead23", "ead24", "ead25",
)  # fmt: skip
IDENTIFIER, ABSTRACT, SOURCE_FILE, ACCESS = "ead26", "ead27", "ead28", "ead17"

NOTES = {
    "scopecontent": "ead11",
    "bioghist": "ead12",
    "arrangement": "ead13",
    "acqinfo": "ead14",
    "custodhist": "ead15",
    "relatedmaterial": "ead16",
    "accessrestrict": ACCESS,
}
"""Note elements → their field (paragraphs kept as separate lines)."""

AGENT_KINDS = {"persname": "person", "famname": "family", "corpname": "corporateBody"}
SUBJECT_KINDS = ("subject", "genreform", "function", "occupation")

_f = functools.partial(schema_field, SECTION)

SCHEMA = section_schema(
    SECTION,
    (
        "Archival descriptions",
        "Descripcions arxivístiques",
        "Descripciones archivísticas",
    ),
    "Finding aids (EAD): fonds, series, files and items, each part of its parent.",
    label_field=TITLE,
    fields=(
        _f(TITLE, ("Title", "Títol", "Título"), multilingual=True),
        _f(UNITID, ("Reference code", "Codi de referència", "Código de referencia")),
        _f(TYPED_UNITID, ("Typed reference code", "Codi tipificat", "Código tipificado")),
        _f(LEVEL, ("Level", "Nivell", "Nivel")),
        _f(DATES, ("Dates", "Dates", "Fechas")),
        _f(FROM, ("From", "Des de", "Desde"), "date"),
        _f(TO, ("To", "Fins a", "Hasta"), "date"),
        _f(EXTENT, ("Extent", "Volum", "Volumen"), multilingual=True),
        _f(CONTAINER, ("Container", "Contenidor", "Contenedor")),
        _f(
            "ead11",
            ("Scope and content", "Abast i contingut", "Alcance y contenido"),
            multilingual=True,
        ),
        _f("ead12", ("History", "Història", "Historia"), multilingual=True),
        _f("ead13", ("Arrangement", "Organització", "Organización"), multilingual=True),
        _f("ead14", ("Acquisition", "Ingrés", "Ingreso"), multilingual=True),
        _f(
            "ead15",
            ("Custodial history", "Història arxivística", "Historia archivística"),
            multilingual=True,
        ),
        _f(
            "ead16",
            ("Related material", "Documentació relacionada", "Documentación relacionada"),
            multilingual=True,
        ),
        _f(
            ACCESS,
            ("Conditions of access", "Condicions d'accés", "Condiciones de acceso"),
            multilingual=True,
        ),
        _f(PART_OF, ("Part of", "Part de", "Parte de"), "relation", target_section=SECTION),
        _f(ORDER, ("Order", "Ordre", "Orden"), "number"),
        _f(
            FINDING_AID,
            ("Finding aid", "Instrument de descripció", "Instrumento de descripción"),
            multilingual=True,
        ),
        _f(CREATORS, ("Creators", "Productors", "Productores"), "relation", target_section=AGENTS),
        _f(
            NAMES,
            ("Subject names", "Noms (matèria)", "Nombres (materia)"),
            "relation",
            target_section=AGENTS,
        ),
        _f(PLACES_FIELD, ("Places", "Llocs", "Lugares"), "relation", target_section=PLACES),
        _f(
            SUBJECTS_FIELD,
            ("Subjects", "Matèries", "Materias"),
            "relation",
            target_section=SUBJECTS,
        ),
        _f(DAO, ("Digital objects", "Objectes digitals", "Objetos digitales"), "iri"),
        _f(IDENTIFIER, ("Identifier", "Identificador", "Identificador")),
        _f(ABSTRACT, ("Abstract", "Resum", "Resumen"), multilingual=True),
        _f(SOURCE_FILE, ("Source file", "Fitxer d'origen", "Fichero de origen")),
    ),
)
