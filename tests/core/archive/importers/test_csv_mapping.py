"""The column mapping: guessed from AtoM, ArchivesSpace and ca/es/en headers, edited, keyed."""

from __future__ import annotations

import json

import pytest

from app.core.archive.importers.csv_mapping import (
    ColumnMapping,
    guess_mapping,
    layout_key,
    load_mapping_file,
)
from app.core.errors import ImportFailed

ATOM_COLUMNS = (
    "legacyId,parentId,qubitParentSlug,identifier,title,levelOfDescription,extentAndMedium,"
    "repository,archivalHistory,scopeAndContent,arrangement,accessConditions,language,"
    "eventDates,eventStartDates,eventEndDates,eventActors,nameAccessPoints,placeAccessPoints,"
    "subjectAccessPoints,digitalObjectPath,digitalObjectURI,culture"
)
ATOM_HEADER = ATOM_COLUMNS.split(",")


def roles(header: list[str]) -> dict[str, str]:
    return {rule.column: rule.role for rule in guess_mapping(header).columns}


def test_atom_template_columns_are_recognised() -> None:
    got = roles(ATOM_HEADER)

    assert got["legacyId"] == "external_id"  # AtoM's key of the row: parentId names it
    assert got["identifier"] == "identifier"  # the reference code
    assert got["parentId"] == "parent"
    assert got["qubitParentSlug"] == "ignore"
    assert got["title"] == "title"
    assert got["levelOfDescription"] == "level"
    assert got["extentAndMedium"] == "extent"
    assert got["scopeAndContent"] == "description"
    assert got["accessConditions"] == "access"
    assert (got["eventDates"], got["eventStartDates"], got["eventEndDates"]) == (
        "date",
        "date_from",
        "date_to",
    )
    assert got["eventActors"] == got["nameAccessPoints"] == "creator"
    assert got["placeAccessPoints"] == "place"
    assert got["subjectAccessPoints"] == "subject"
    assert got["digitalObjectPath"] == got["digitalObjectURI"] == "media"
    assert got["culture"] == "culture"
    assert got["repository"] == got["archivalHistory"] == got["arrangement"] == "text"


@pytest.mark.parametrize(
    ("header", "key", "code"),
    [
        (["legacyId", "parentId", "identifier", "title"], "legacyId", "identifier"),
        (["ref_id", "component_id", "title"], "ref_id", "component_id"),
        (["legacyId", "Codi de referència", "Títol"], "legacyId", "Codi de referència"),
    ],
)
def test_a_systems_row_key_beside_a_reference_code_is_the_key_not_the_code(
    header: list[str], key: str, code: str
) -> None:
    """AtoM's ``legacyId`` (ArchivesSpace's ``ref_id``) is what re-imports match and parent
    cells name; the reference code beside it is the identifier a unit is cited by, labelled as
    one in the three languages."""
    mapping = guess_mapping(header)
    got = {rule.column: rule for rule in mapping.columns}

    assert (got[key].role, got[key].multi) == ("external_id", False)
    assert got[code].role == "identifier"
    assert got[code].labels["lg-cat"] in ("Codi de referència", code)
    assert [c for c, rule in got.items() if rule.role == "identifier"] == [code]


def test_a_key_column_alone_stays_the_identifier() -> None:
    """With no reference-code column, ``legacyId`` is the identifier (shown and matched)."""
    assert roles(["legacyId", "parentId", "title"])["legacyId"] == "identifier"
    assert roles(["ref_id", "title"])["ref_id"] == "identifier"


def test_archivesspace_columns_are_recognised() -> None:
    got = roles(["title", "ref_id", "level", "dates_expression", "begin", "end", "extent_number",
                 "n_scopecontent", "agent_name", "subject", "sort_name"])  # fmt: skip

    assert got["ref_id"] == "identifier"
    assert (got["dates_expression"], got["begin"], got["end"]) == ("date", "date_from", "date_to")
    assert got["n_scopecontent"] == "description"
    assert got["agent_name"] == "creator" and got["subject"] == "subject"
    assert got["extent_number"] == "extent" and got["level"] == "level"
    assert got["title"] == "title" and got["sort_name"] == "text"  # one title column


@pytest.mark.parametrize(
    ("header", "role"),
    [
        ("Títol", "title"),
        ("TÍTULO", "title"),
        ("Title", "title"),
        ("Data", "date"),
        ("Fecha", "date"),
        ("Descripció", "description"),
        ("descripcion", "description"),
        ("Autor", "creator"),
        ("Productor", "creator"),
        ("Lloc", "place"),
        ("Lugar", "place"),
        ("Matèries", "subject"),
        ("MATERIAS", "subject"),
        ("Codi de referència", "identifier"),
        ("Codi", "identifier"),
        ("Código", "identifier"),
        ("Código de referencia", "identifier"),
        ("Reference code", "identifier"),
        ("Nivell", "level"),
        ("Nivel", "level"),
        ("  Condicions d'accés ", "access"),
        ("Observacions", "text"),
    ],
)
def test_catalan_spanish_and_english_headers_fold_accents_and_case(header: str, role: str) -> None:
    assert roles([header])[header] == role


def test_known_headers_get_labels_in_the_three_languages() -> None:
    mapping = guess_mapping(["Títol", "Observacions", "scopeAndContent"])
    title, notes, scope = mapping.columns

    assert title.labels == {"lg-eng": "Title", "lg-cat": "Títol", "lg-spa": "Título"}
    assert notes.labels == {"lg-nolan": "Observacions"}
    assert scope.labels["lg-cat"] == "Abast i contingut"


def test_arxiu_export_columns_keep_their_tags() -> None:
    header = ["section_id", "external_id", "restricted", "Title [lg-cat]", "Title [lg-eng]",
              "Creator [agent1]", "Part of [link]", "Keywords [lg-cat]", "Autor"]  # fmt: skip
    mapping = guess_mapping(header)
    got = {r.column: (r.role, r.lang) for r in mapping.columns}

    assert got["section_id"] == ("origin", None)
    assert got["external_id"] == ("external_id", None)
    assert got["restricted"] == ("restricted", None)
    assert got["Title [lg-cat]"] == ("title", "lg-cat")
    assert got["Title [lg-eng]"] == ("title", "lg-eng")
    assert got["Creator [agent1]"] == ("creator", None)
    assert got["Part of [link]"] == ("link", None)
    assert got["Keywords [lg-cat]"] == ("text", "lg-cat")  # untagged: a text field
    assert got["Autor"] == ("text", None)


def test_openrefine_spill_columns_continue_the_cell_before() -> None:
    got = roles(["origination_name", "bioghist", "Column 4", "Column 5"])

    assert got["Column 4"] == got["Column 5"] == "continue"
    assert got["origination_name"] == "creator"


def test_layout_key_ignores_case_accents_and_spacing_but_not_order() -> None:
    assert layout_key(["Títol", "Data"]) == layout_key(["titol ", "DATA"])
    assert layout_key(["Títol", "Data"]) != layout_key(["Data", "Títol"])


def test_a_mapping_file_edits_the_guess() -> None:
    header = ["Títol", "Signatura", "Notes"]
    data = {
        "columns": [{"column": "notes", "role": "ignore"}, {"column": "Títol", "lang": "lg-cat"}]
    }

    mapping = load_mapping_file(json.dumps(data).encode(), header)
    got = {r.column: (r.role, r.lang) for r in mapping.columns}

    assert got == {
        "Títol": ("title", "lg-cat"),
        "Signatura": ("identifier", None),
        "Notes": ("ignore", None),
    }
    again = ColumnMapping.from_json(mapping.to_json(), header)
    assert [(r.role, r.lang) for r in again.columns] == [(r.role, r.lang) for r in mapping.columns]


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b'{"columns": "x"}',
        b'{"columns": [{"column": "a", "role": "wizard"}]}',
        b'{"columns": [{"column": "a", "lang": "Catalan"}]}',
        b'{"columns": [{"role": "title"}]}',
    ],
)
def test_a_bad_mapping_file_is_a_coded_error(data: bytes) -> None:
    with pytest.raises(ImportFailed) as caught:
        load_mapping_file(data, ["a"])
    assert caught.value.code == "import.mapping_invalid"
