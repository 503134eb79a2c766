"""Codes an archive stores (levels of description, entity types, kinds of subject) said in the
reader's language: which fields hold them, and the terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.archive import Archive
from app.core.archive.hierarchy import hierarchy_of
from app.core.archive.importers import run_import
from app.core.archive.importers.authorities import AGENTS, ENTITY_TYPE, SUBJECT_KIND
from app.core.archive.vocabulary import (
    ENTITY_TYPES,
    LEVELS,
    SUBJECT_KINDS,
    field_terms,
    level_code,
    said,
)
from tests.conftest import shared_data


@pytest.mark.parametrize(
    ("value", "lang", "expected"),
    [
        ("series", "lg-cat", "sèrie"),
        ("Series", "lg-spa", "serie"),  # as AtoM's template writes it
        ("fonds", "lg-eng", "fonds"),
        ("otherlevel", "lg-cat", "altre nivell"),
        ("recordgrp", "lg-spa", "grupo de fondos"),
        ("file", "lg-fra", "file"),  # no French forms: English
        ("sèrie", "lg-eng", "sèrie"),  # a person's own word: as written
        ("accession", "lg-cat", "accession"),
    ],
)
def test_a_level_is_said_in_the_language_or_as_written(
    value: str, lang: str, expected: str
) -> None:
    assert said(value, LEVELS, lang) == expected


@pytest.mark.parametrize(
    ("written", "code"),
    [
        ("fonds", "fonds"),
        ("Series", "series"),
        ("Record Group", "recordgrp"),
        ("recordgrp", "recordgrp"),
        ("Fons", "fonds"),
        ("Sèrie", "series"),
        ("  unitat   documental ", "item"),
        ("Expedient", "file"),
        ("Fondo", "fonds"),
        ("Subserie", "subseries"),
        ("Unidad documental", "item"),
        ("Accession", None),
        ("", None),
    ],
)
def test_a_level_written_in_any_of_the_three_languages_has_its_ead_code(
    written: str, code: str | None
) -> None:
    assert level_code(written) == code


def test_entity_types_as_eac_cpf_writes_them() -> None:
    assert said("corporateBody", ENTITY_TYPES, "lg-cat") == "institució"
    assert said("corporateBody", ENTITY_TYPES, "lg-eng") == "corporate body"
    assert said("family", ENTITY_TYPES, "lg-spa") == "familia"
    assert said("corporateBody", LEVELS, "lg-cat") == "corporateBody"


def test_the_kinds_of_subject_an_ead_import_writes(archive: Archive) -> None:
    """Every kind of subject the UW finding aids name (``subject``, ``genreform``,
    ``occupation``) is said in Catalan and Spanish; the window showed the codes."""
    run_import(archive, "ead", shared_data("ead", "uw-labor-archives"))
    kinds = {r.text(SUBJECT_KIND) or "" for r in archive.iter_records("subject1")}

    assert kinds == {"subject", "genreform", "occupation"}
    assert {said(k, SUBJECT_KINDS, "lg-cat") for k in kinds} == {
        "matèria",
        "gènere o forma",
        "ocupació",
    }
    assert said("genreform", SUBJECT_KINDS, "lg-spa") == "género o forma"


def test_the_fields_that_hold_codes(archive: Archive, tmp_path: Path) -> None:
    """EAD's level field, a table's level column (its values AtoM's English), the agents'
    entity type and a subject's kind; no other field, and no field of a section that is not a
    hierarchy."""
    run_import(archive, "ead", shared_data("ead", "anf", "FRAN_IR_003500.xml"))
    table = tmp_path / "fonds.csv"
    table.write_text(
        "legacyId,parentId,title,levelOfDescription\nF1,,Fons Puig,Fonds\nS1,F1,Cartes,Series\n",
        encoding="utf-8",
    )
    summary = run_import(archive, "csv", table)
    [csv_section] = [s for s in summary.sections if s.startswith("csv")]

    ead = hierarchy_of(archive, "ead1")
    csv = hierarchy_of(archive, csv_section)
    assert ead is not None and csv is not None and csv.level_field is not None
    assert field_terms("ead1", ead) == {ead.level_field: LEVELS}
    assert field_terms(csv_section, csv) == {csv.level_field: LEVELS}
    assert field_terms(AGENTS, hierarchy_of(archive, AGENTS)) == {ENTITY_TYPE: ENTITY_TYPES}
    assert field_terms("subject1", hierarchy_of(archive, "subject1")) == {
        SUBJECT_KIND: SUBJECT_KINDS
    }
    levels = {r.text(csv.level_field) for r in archive.iter_records(csv_section)}
    assert {said(level, LEVELS, "lg-cat") for level in levels} == {"fons", "sèrie"}
