"""An import's skips said in the language of a table: every reason an importer writes as a
phrase has a Catalan and a Spanish translation with the same parameters; a reason that is an
error's message keeps its words after its code's label."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from app.core.archive.importers.base import BAD_ROW, Skip
from app.core.archive.importers.oai_ead import LEFT_OUT
from app.core.archive.importers.oai_reader import DELETED_UPSTREAM
from app.core.i18n_tables import TABLE_LANGS, load_table
from app.core.import_report import skip_place, skip_reason

IMPORTERS = Path(__file__).resolve().parents[2] / "app" / "core" / "archive" / "importers"
FIXED_REASONS = (DELETED_UPSTREAM, LEFT_OUT)
"""Reasons passed as a phrase of their own (``Phrase.of(withdrawal.why)``), not as a literal."""


def said_templates() -> dict[str, str]:
    """The template of every ``Skip.said(...)`` in the importers (its fourth argument: a string,
    or a name the same function sets to strings), with where it is written."""
    found: dict[str, str] = {}
    for path in sorted(IMPORTERS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            names: dict[str, list[str]] = {}
            for node in ast.walk(function):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                    for target in node.targets:
                        if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                            names.setdefault(target.id, []).append(node.value.value)
            for node in ast.walk(function):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "said"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "Skip"
                ):
                    continue
                argument = node.args[3]
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    templates = [argument.value]
                elif isinstance(argument, ast.Name) and argument.id in names:
                    templates = names[argument.id]
                else:
                    raise AssertionError(
                        f"{path.name}:{node.lineno}: a template the scan can't read"
                    )
                for template in templates:
                    found.setdefault(template, f"{path.name}:{node.lineno}")
    return found


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_the_scan_finds_the_importers_templates() -> None:
    templates = said_templates()
    assert "duplicate id {id!r} (first on line {first})" in templates  # a literal argument
    assert "no <ead> element (the root is <{root}>)" in templates  # a name set before the call
    assert len(templates) >= 30


@pytest.mark.parametrize("lang", TABLE_LANGS)
def test_every_template_is_translated_with_the_same_parameters(lang: str) -> None:
    table = load_table(lang)
    templates = {**said_templates(), **{reason: "oai_pmh.py" for reason in FIXED_REASONS}}
    missing = {t: where for t, where in templates.items() if not table.get(t)}
    assert not missing, f"add to resources/i18n/{lang}.json: {missing}"
    unlike = {t: table[t] for t in templates if fields(table[t]) != fields(t)}
    assert not unlike, unlike


def test_a_skip_is_said_in_catalan_spanish_and_english() -> None:
    skip = Skip.said(
        4, "hoards.csv", BAD_ROW, "the row has {cells} cells, the header {width}", cells=5, width=3
    )
    assert skip.reason == "the row has 5 cells, the header 3"
    assert skip_reason(skip, {}) == skip.reason
    assert skip_reason(skip, load_table("ca")) == "la fila té 5 cel·les i la capçalera, 3"
    assert skip_reason(skip, load_table("es")) == "la fila tiene 5 celdas y la cabecera, 3"
    assert skip.to_dict() == {
        "line": 4,
        "reason": "the row has 5 cells, the header 3",
        "file": "hoards.csv",
        "code": BAD_ROW,
        "template": "the row has {cells} cells, the header {width}",
        "params": {"cells": 5, "width": 3},
    }


def test_an_error_message_as_reason_follows_its_code_s_label() -> None:
    message = "x.xml declares XML entities, which Arxiu never expands."
    skip = Skip(1, message, "x.xml", "import.xml_entity")
    assert skip_reason(skip, load_table("ca")) == f"Entitats XML rebutjades: {message}"
    assert skip_reason(skip, load_table("es")) == f"Entidades XML rechazadas: {message}"
    assert skip_reason(skip, {}) == message
    assert "template" not in skip.to_dict()


def test_a_fixed_sentence_is_translated_by_its_text() -> None:
    skip = Skip(0, "scanned, no text layer", "scan.pdf", "import.pdf_no_text")
    assert skip_reason(skip, load_table("ca")) == "escanejat, sense capa de text"


@pytest.mark.parametrize(
    ("file", "line", "shown"),
    [("a.csv", 12, "a.csv:12"), ("notes.odt", 0, "notes.odt"), ("", 7, "7")],
)
def test_a_skip_of_a_whole_file_names_the_file_without_a_line_0(
    file: str, line: int, shown: str
) -> None:
    """A folder import's file of a kind it does not read is skipped whole: ``notes.odt``, not
    ``notes.odt:0``."""
    assert skip_place(file, line) == shown
