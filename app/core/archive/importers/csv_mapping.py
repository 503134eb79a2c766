"""The column mapping of a table import: which column becomes which field, in which role.

:func:`guess_mapping` reads a header and guesses a :class:`ColumnMapping`: AtoM's archival
description CSV template columns (``legacyId``, ``parentId``, ``title``, ``eventDates``,
``scopeAndContent``, ``subjectAccessPoints``...), ArchivesSpace's template and export columns
(``ref_id``, ``component_id``, ``dates_expression``, ``begin``, ``end``, ``n_scopecontent``,
``sort_name``...), Catalan, Spanish and English headers (``Títol``/``Título``/``Title``,
``Data``/``Fecha``/``Date``...) with accents, case, spaces and underscores folded away, and the
conventions of Arxiu's own CSV export (``Title [lg-cat]``, ``Creator [agent1]``,
``Part of [link]``, ``section_id``, ``external_id``). A person may edit the mapping (a JSON file,
see :meth:`ColumnMapping.from_json`); it is saved in the archive's meta under the layout's key
(:func:`layout_key`, made from the normalised column list) so the next import of the same layout
uses it.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from app.core.errors import ImportFailed
from app.core.json_types import JsonObject, JsonValue
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

ROLES = (
    "title",
    "identifier",
    "external_id",
    "date",
    "date_from",
    "date_to",
    "description",
    "creator",
    "subject",
    "place",
    "parent",
    "link",
    "origin",
    "level",
    "language",
    "culture",
    "access",
    "restricted",
    "media",
    "extent",
    "text",
    "continue",
    "ignore",
)
"""What a column can be. ``creator``/``subject``/``place`` link to the shared authority sections
by name; ``parent`` links to the record of the same import whose key (``external_id``, else
identifier) the cell holds;
``link`` links to the row whose ``origin`` (an Arxiu export's ``section_id``) the cell holds, in
this file or in a table imported before;
``external_id`` is a row's key in the system it comes from (an Arxiu export's
``external_id``; AtoM's ``legacyId`` or ArchivesSpace's ``ref_id`` beside a reference-code
column, :data:`KEY_COLUMNS`): re-imports match it and ``parent`` cells name it; it makes no
field; ``culture`` is the language of the row's texts (AtoM); ``restricted`` (Arxiu's export) says
whether the record is restricted (``true``/``false``); ``continue`` appends the cell to the
previous column's value (a spreadsheet's spill-over columns); ``ignore`` is not imported."""

FIELD_KIND = {
    "date_from": "date",
    "date_to": "date",
    "creator": "relation",
    "subject": "relation",
    "place": "relation",
    "parent": "relation",
    "link": "relation",
    "media": "iri",
}
"""The field kind of each role that is not plain text."""

NO_FIELD = frozenset({"ignore", "continue", "culture", "origin", "restricted", "external_id"})
"""Roles whose cells make no field of their own."""

TEXT_ROLES = frozenset({"title", "description", "text", "level", "extent", "access", "date"})
"""Roles whose values carry a language (given, from a ``culture`` column, or guessed)."""

SINGLE = frozenset({"identifier", "external_id", "origin", "culture", "parent", "restricted"})
"""Roles whose cell is one value (never split at ``|``)."""

META_PREFIX = "import.csv.layout."
MAX_MAPPING_BYTES = 1_000_000

_Names = tuple[str, str, str]


def fold(text: str) -> str:
    """``text`` lower-cased with accents removed and spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.replace("\ufeff", "").casefold())
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.split())


def compact(header: str) -> str:
    """A header's matching form: folded, letters and digits only (``Títol`` → ``titol``)."""
    return re.sub(r"[^0-9a-z]", "", fold(header))


def _k(role: str, names: _Names, *headers: str) -> dict[str, tuple[str, _Names]]:
    return {compact(h): (role, names) for h in headers}


KNOWN: dict[str, tuple[str, _Names]] = {
    **_k("identifier", ("Identifier", "Identificador", "Identificador"), "legacyId"),
    **_k("external_id", ("Identifier", "Identificador", "Identificador"), "external_id"),
    **_k(
        "identifier",
        ("Reference code", "Codi de referència", "Código de referencia"),
        "identifier",
        "reference code",
        "codi de referència",
        "código de referencia",
        "ref_id",
        "refid",
        "component_id",
        "unitid",
        "signatura",
        "codi",
        "código",
        "code",
        "identificador",
        "id",
        "collection_number",
        "call number",
        "reference",
        "referència",
        "referencia",
    ),
    **_k("origin", ("Record", "Registre", "Registro"), "section_id"),
    **_k(
        "parent",
        ("Part of", "Forma part de", "Forma parte de"),
        "parentId",
        "parent",
        "parent_id",
        "part of",
        "forma part de",
        "forma parte de",
        "pare",
        "padre",
        "parent identifier",
    ),
    **_k(
        "title",
        ("Title", "Títol", "Título"),
        "title",
        "títol",
        "título",
        "unittitle",
        "titulo",
        "titol",
    ),
    **_k(
        "title", ("Name", "Nom", "Nombre"), "sort_name", "name", "nom", "nombre", "authorized name"
    ),
    **_k(
        "date",
        ("Date", "Data", "Fecha"),
        "date",
        "data",
        "fecha",
        "eventDates",
        "dates_expression",
        "expression",
        "unitdate",
        "date_range",
        "dates",
        "dates extremes",
        "fechas",
        "date expression",
    ),
    **_k(
        "date_from",
        ("From", "Des de", "Desde"),
        "eventStartDates",
        "begin",
        "start date",
        "start_date",
        "date from",
        "data inici",
        "data d'inici",
        "fecha inicio",
        "fecha de inicio",
        "des de",
        "desde",
    ),
    **_k(
        "date_to",
        ("To", "Fins a", "Hasta"),
        "eventEndDates",
        "end",
        "end date",
        "end_date",
        "date to",
        "data fi",
        "data final",
        "fecha fin",
        "fecha final",
        "fins a",
        "hasta",
    ),
    **_k(
        "description",
        ("Description", "Descripció", "Descripción"),
        "description",
        "descripció",
        "descripción",
        "abstract",
        "summary",
        "resum",
        "resumen",
    ),
    **_k(
        "description",
        ("Scope and content", "Abast i contingut", "Alcance y contenido"),
        "scopeAndContent",
        "scopecontent",
        "n_scopecontent",
        "scope and content",
        "abast i contingut",
        "alcance y contenido",
        "contingut",
        "contenido",
    ),
    **_k(
        "text",
        ("Biographical history", "Història biogràfica", "Historia biográfica"),
        "bioghist",
        "n_bioghist",
        "biographical history",
        "història biogràfica",
        "historia biográfica",
    ),
    **_k(
        "text",
        ("Archival history", "Història arxivística", "Historia archivística"),
        "archivalHistory",
        "custodhist",
        "n_custodhist",
        "història arxivística",
        "historia archivística",
    ),
    **_k(
        "text",
        ("Arrangement", "Organització", "Organización"),
        "arrangement",
        "n_arrangement",
        "organització",
        "organización",
    ),
    **_k("text", ("Repository", "Arxiu", "Archivo"), "repository", "repositori", "archivo"),
    **_k("text", ("Source", "Font", "Fuente"), "source", "font", "fuente"),
    **_k("text", ("Wikidata id", "Identificador Wikidata", "Identificador Wikidata"), "qid"),
    **_k(
        "creator",
        ("Creator", "Productor", "Productor"),
        "creator",
        "creators",
        "autor",
        "author",
        "productor",
        "productors",
        "productores",
        "creador",
        "creadors",
        "creadores",
        "eventActors",
        "origination",
        "origination_name",
        "agent_name",
        "agent",
        "autors",
        "autores",
    ),
    **_k("creator", ("Names", "Noms", "Nombres"), "nameAccessPoints", "names", "noms", "nombres"),
    **_k(
        "subject",
        ("Subjects", "Matèries", "Materias"),
        "subjects",
        "subject",
        "matèries",
        "matèria",
        "materias",
        "materia",
        "subjectAccessPoints",
        "keywords",
        "paraules clau",
        "palabras clave",
        "temes",
        "temas",
    ),
    **_k("subject", ("Genres", "Gèneres", "Géneros"), "genreAccessPoints"),
    **_k(
        "place",
        ("Places", "Llocs", "Lugares"),
        "place",
        "places",
        "lloc",
        "llocs",
        "lugar",
        "lugares",
        "placeAccessPoints",
        "geographic",
        "geogname",
    ),
    **_k(
        "level",
        ("Level", "Nivell", "Nivel"),
        "level",
        "nivell",
        "nivel",
        "levelOfDescription",
        "level of description",
        "nivell de descripció",
        "nivel de descripción",
    ),
    **_k(
        "language",
        ("Language", "Llengua", "Idioma"),
        "language",
        "languages",
        "llengua",
        "llengües",
        "idioma",
        "idiomas",
        "lang",
        "language_of_materials",
        "language of material",
        "langmaterial",
    ),
    **_k("culture", ("Culture", "Cultura", "Cultura"), "culture"),
    **_k(
        "access",
        ("Conditions of access", "Condicions d'accés", "Condiciones de acceso"),
        "accessConditions",
        "accessrestrict",
        "n_accessrestrict",
        "access",
        "accés",
        "acceso",
        "condicions d'accés",
        "condiciones de acceso",
        "access conditions",
        "restrictions",
        "restriccions",
        "restricciones",
    ),
    **_k("restricted", ("Restricted", "Restringit", "Restringido"), "restricted"),
    **_k(
        "media",
        ("Digital object", "Objecte digital", "Objeto digital"),
        "digitalObjectPath",
        "digitalObjectURI",
        "digital_object_link",
        "digital object",
        "objecte digital",
        "objeto digital",
    ),
    **_k(
        "media",
        ("Link", "Enllaç", "Enlace"),
        "url",
        "uri",
        "link",
        "enllaç",
        "enlace",
        "file",
        "fitxer",
        "fichero",
    ),
    **_k(
        "extent",
        ("Extent", "Volum i suport", "Volumen y soporte"),
        "extentAndMedium",
        "extent",
        "extent_number",
        "physdesc",
        "volum",
        "volumen",
        "extensió",
        "extensión",
        "volum i suport",
        "volumen y soporte",
    ),
    **_k(
        "text",
        ("Physical description", "Descripció física", "Descripción física"),
        "physical_description",
        "physical description",
        "descripció física",
        "descripción física",
    ),
    **_k("ignore", ("Slug", "Slug", "Slug"), "qubitParentSlug", "slug"),
}
"""Folded header → (role, labels in English, Catalan, Spanish)."""

IDENTIFIER_RANK = tuple(compact(h) for h in ("legacyId", "ref_id", "identifier"))
"""When several columns could be the identifier, the first of these wins."""
KEY_COLUMNS = frozenset(compact(h) for h in ("legacyId", "ref_id"))
"""A system's own key of a row (AtoM's ``legacyId``, ArchivesSpace's ``ref_id``): beside a
reference-code column (AtoM's ``identifier``, ``component_id``, ``Codi de referència``...) it is
the row's ``external_id`` (what re-imports match and ``parentId`` names), and the reference code
is the identifier, the code a unit is cited by."""

AUTHORITY_SUFFIX = {"agent1": "creator", "subject1": "subject", "place1": "place"}
_SUFFIX = re.compile(r"^(?P<base>.*?)\s*\[(?P<tag>[^\[\]]+)\]\s*$")
_SPILL = re.compile(r"^column\s*\d+$", re.IGNORECASE)
_TEMPLATE_NAME = re.compile(r"^[a-z]+(?:_[a-z]+)+$|^[a-z]+[A-Z][A-Za-z]*$")
MACHINE_NAMES = frozenset(
    {
        *("unitid", "unittitle", "unitdate", "bioghist", "scopecontent", "custodhist"),
        *("arrangement", "physdesc", "extent", "origination", "langmaterial", "accessrestrict"),
        *("userestrict", "acqinfo", "controlaccess", "persname", "corpname", "famname"),
        *("geogname", "genreform", "abstract", "qid", "identifier"),
    }
)
"""Headers that are names of EAD elements (or a Frictionless/Wikidata field, or AtoM's
``identifier``), not words of a person's own: such a column is labelled with the known names in
the three UI languages, as a template's column is (a header in a person's own words keeps
them)."""
_LANG_TAG = re.compile(r"^lg-[a-z]{2,8}$")


@dataclass(frozen=True)
class ColumnRule:
    """What one column becomes."""

    column: str
    """The header text as written in the file."""
    role: str = "text"
    lang: str | None = None
    """The language of the column's values (``Title [lg-cat]``), when the column says."""
    multi: bool = True
    """Whether ``|`` separates several values in a cell (AtoM's convention)."""
    label: str = ""
    """The field's label (the header without its ``[...]`` tag)."""
    labels: dict[str, str] = field(default_factory=dict)
    """The field's labels per language (the three UI languages for a known header)."""
    field: str | None = None
    """The target field tipo, once the section exists."""

    @property
    def kind(self) -> str:
        """The kind of field this column makes."""
        return FIELD_KIND.get(self.role, "text")

    def to_json(self) -> JsonObject:
        """The rule as JSON-ready data."""
        out: JsonObject = {"column": self.column, "role": self.role, "multi": self.multi}
        if self.lang:
            out["lang"] = self.lang
        if self.field:
            out["field"] = self.field
        return out


@dataclass(frozen=True)
class ColumnMapping:
    """Every column of a layout with its rule, and the section the rows go to."""

    columns: tuple[ColumnRule, ...]
    layout: str = ""
    section: str | None = None

    def role_columns(self, role: str) -> list[int]:
        """The positions of the columns in ``role``."""
        return [i for i, rule in enumerate(self.columns) if rule.role == role]

    def to_json(self) -> JsonObject:
        """The mapping as JSON-ready data (the form ``--mapping FILE`` reads)."""
        return {
            "layout": self.layout,
            "section": self.section,
            "columns": [rule.to_json() for rule in self.columns],
        }

    @classmethod
    def from_json(cls, data: JsonValue, header: list[str]) -> ColumnMapping:
        """The mapping ``data`` describes for ``header``: each listed column's role (and
        ``lang``, ``multi``, ``field``), the other columns guessed.

        Raises:
            ImportFailed: ``import.mapping_invalid`` for data that is not such a mapping.
        """
        guessed = guess_mapping(header)
        given = _given_rules(data)
        rules = []
        for rule in guessed.columns:
            edit = given.get(compact(rule.column))
            rules.append(rule if edit is None else _edited(rule, edit))
        section = data.get("section") if isinstance(data, dict) else None
        return ColumnMapping(
            tuple(rules), guessed.layout, section if isinstance(section, str) else None
        )


def _invalid(why: str | Phrase) -> ImportFailed:
    return ImportFailed(
        "import.mapping_invalid",
        Phrase.of("The column mapping is not valid: {why}.", why=why),
        hint=Phrase.of(
            'Write {{"columns": [{{"column": "Títol", "role": "title"}}, ...]}}; roles: {roles}.',
            roles=", ".join(ROLES),
        ),
    )


def _given_rules(data: JsonValue) -> dict[str, JsonObject]:
    """The mapping's rules by folded column name (each checked for a name, role and lang)."""
    columns = data.get("columns") if isinstance(data, dict) else None
    if not isinstance(columns, list):
        raise _invalid(Phrase.of("expected an object with a list 'columns'"))
    given: dict[str, JsonObject] = {}
    for item in columns:
        column = item.get("column") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(column, str):
            raise _invalid(Phrase.of("each column needs a 'column' name"))
        if item.get("role", "text") not in ROLES:
            raise _invalid(Phrase.of("unknown role {role}", role=repr(item.get("role"))))
        lang = item.get("lang")
        if lang is not None and not (isinstance(lang, str) and _LANG_TAG.match(lang)):
            raise _invalid(
                Phrase.of("'lang' must be a code like lg-cat, not {lang}", lang=repr(lang))
            )
        given[compact(column)] = item
    return given


def _edited(rule: ColumnRule, edit: JsonObject) -> ColumnRule:
    """``rule`` changed as a checked rule of the mapping says (see :func:`_given_rules`)."""
    role = str(edit.get("role", rule.role))
    tipo = edit.get("field")
    lang = edit.get("lang", rule.lang)
    return replace(
        rule,
        role=role,
        lang=lang if isinstance(lang, str) else None,
        multi=bool(edit.get("multi", role not in SINGLE)),
        field=tipo if isinstance(tipo, str) and (role == rule.role or tipo) else None,
    )


def layout_key(header: list[str]) -> str:
    """The key of a layout: a hash of its normalised column list."""
    joined = "\x1f".join(compact(h) or f"#{i}" for i, h in enumerate(header))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()[:16]


def guess_mapping(header: list[str]) -> ColumnMapping:
    """The mapping guessed from a header (see the module doc)."""
    rules = [_guess(column) for column in header]
    identifiers = [i for i, rule in enumerate(rules) if rule.role == "identifier"]
    if len(identifiers) > 1:
        rank = {c: n for n, c in enumerate(IDENTIFIER_RANK)}
        identifiers.sort(key=lambda i: (rank.get(_base_key(rules[i].column), 99), i))
        best, *others = identifiers
        key_only = not any(rule.role == "external_id" for rule in rules)
        if key_only and _base_key(rules[best].column) in KEY_COLUMNS and others:
            rules[best] = replace(rules[best], role="external_id", multi=False)
            best, *others = others
        for i in others:
            rules[i] = replace(rules[i], role="text", multi=True)
    if any(rule.role == "origin" for rule in rules):
        rules = [_exported(rule) for rule in rules]
    for role in ("title", "origin", "culture", "external_id"):
        same = [i for i, rule in enumerate(rules) if rule.role == role]
        for i in same[1:]:
            if role != "title" or _base_key(rules[i].column) != _base_key(rules[same[0]].column):
                rules[i] = replace(rules[i], role="text", multi=True)
    return ColumnMapping(tuple(rules), layout_key(header))


def _exported(rule: ColumnRule) -> ColumnRule:
    """In an Arxiu export only a column's tag makes a relation; its identifier is
    ``external_id`` (a field called "Identifier" is a field)."""
    match = _SUFFIX.match(rule.column)
    tagged = match is not None and (match["tag"] in AUTHORITY_SUFFIX or match["tag"] == "link")
    if rule.kind == "relation" and not tagged:
        return replace(rule, role="text", multi=True)
    if rule.role in ("identifier", "parent"):
        return replace(rule, role="text", multi=True)
    return rule


def _base_key(column: str) -> str:
    match = _SUFFIX.match(column)
    return compact(match.group("base") if match else column)


def _guess(column: str) -> ColumnRule:
    text = column.replace("\ufeff", "").strip()
    base, tag = text, ""
    match = _SUFFIX.match(text)
    if match:
        base, tag = match.group("base").strip(), match.group("tag").strip()
    role, names = KNOWN.get(compact(base), ("text", ("", "", "")))
    lang = None
    if _LANG_TAG.match(tag):
        lang = tag
    elif tag in AUTHORITY_SUFFIX:
        role = AUTHORITY_SUFFIX[tag]
    elif tag == "link":
        role = "link"
    elif tag:
        base = text  # an unknown tag belongs to the header
    if _SPILL.match(base):
        role = "continue"
    labels = _labels(base or text or "?", names)
    return ColumnRule(
        column=column, role=role, lang=lang, multi=role not in SINGLE, label=base, labels=labels
    )


def _labels(header: str, names: _Names) -> dict[str, str]:
    """The field's labels: the known names in the three UI languages when the header is one of
    them or a template's column name (``scopeAndContent``, ``sort_name``), else the header."""
    if names[0] and (
        compact(header) in {compact(n) for n in names}
        or _TEMPLATE_NAME.match(header)
        or header.casefold() in MACHINE_NAMES
    ):
        return {"lg-eng": names[0], "lg-cat": names[1], "lg-spa": names[2]}
    return {"lg-nolan": header}


def load_mapping_file(data: bytes, header: list[str]) -> ColumnMapping:
    """The mapping in a ``--mapping`` JSON file's bytes, for ``header``."""
    if len(data) > MAX_MAPPING_BYTES:
        raise _invalid(Phrase.of("the file is too large"))
    try:
        parsed = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _invalid(Phrase.of("not JSON ({why})", why=str(exc))) from exc
    return ColumnMapping.from_json(parsed, header)


def saved_mapping(archive: Archive, header: list[str]) -> ColumnMapping | None:
    """The mapping saved for this header's layout by an earlier import, if any."""
    text = archive.meta(META_PREFIX + layout_key(header))
    if text is None:
        return None
    try:
        return ColumnMapping.from_json(json.loads(text), header)
    except (ValueError, ImportFailed):
        return None  # a damaged saved mapping is guessed again


def save_mapping(archive: Archive, mapping: ColumnMapping) -> None:
    """Keep ``mapping`` for the next import of the same layout."""
    text = json.dumps(mapping.to_json(), ensure_ascii=False)
    archive.set_meta(META_PREFIX + mapping.layout, text)
