"""A phrase is English with its parameters kept apart, said in the language of a table."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from app.core.i18n_tables import TABLE_LANGS, load_table
from app.core.phrases import DECIMAL, THOUSANDS, Phrase

DUPLICATE = "duplicate id {id!r} (first on line {first})"


def test_a_phrase_is_its_template_filled_in_english_and_translated_by_a_table() -> None:
    phrase = Phrase.of(DUPLICATE, id="hoard-7", first=3)
    assert phrase.english() == "duplicate id 'hoard-7' (first on line 3)"
    assert phrase.said_in({}) == phrase.english()
    assert phrase.said_in(load_table("ca")) == (
        "identificador duplicat «hoard-7» (apareix primer a la línia 3)"
    )
    assert phrase.said_in(load_table("es")) == (
        "identificador duplicado «hoard-7» (aparece primero en la línea 3)"
    )
    assert phrase.params_json() == {"id": "hoard-7", "first": 3}


def test_a_phrase_among_the_parameters_is_said_in_the_same_language() -> None:
    template = "{identifier}: {why}, kept because it was edited here ({key})"
    phrase = Phrase.of(
        template, identifier="oai:x:1", why=Phrase.of("deleted upstream"), key="dc1/4"
    )
    assert phrase.english() == "oai:x:1: deleted upstream, kept because it was edited here (dc1/4)"
    assert phrase.said_in(load_table("ca")) == (
        "oai:x:1: suprimit a l'origen; es conserva perquè s'ha editat aquí (dc1/4)"
    )
    assert phrase.params_json()["why"] == "deleted upstream"


def test_a_translation_that_does_not_fit_the_parameters_leaves_the_english() -> None:
    phrase = Phrase.of("cell {number} holds a NUL byte", number=4)
    assert phrase.said_in({phrase.template: "la cel·la {numero} té un NUL"}) == phrase.english()
    assert phrase.said_in({phrase.template: ""}) == phrase.english()


def test_a_number_is_written_with_the_separators_of_the_table_s_language() -> None:
    """``{limit:,}`` and a decimal read ``8.388.608`` and ``0,5`` in Catalan and Spanish; text,
    ``!r`` and a number's own digits are left as they are."""
    template = "{name!r}: longer than {limit:,} bytes ({share:.1f} of line {line})"
    phrase = Phrase.of(template, name="a.jsonl", limit=8_388_608, share=0.5, line=12345)
    table = {template: "{name!r}: més de {limit:,} bytes ({share:.1f} de la línia {line})"}
    assert phrase.english() == "'a.jsonl': longer than 8,388,608 bytes (0.5 of line 12345)"
    assert phrase.said_in(table) == "'a.jsonl': més de 8,388,608 bytes (0.5 de la línia 12345)"
    marks = {**table, THOUSANDS: ".", DECIMAL: ","}
    assert phrase.said_in(marks) == "'a.jsonl': més de 8.388.608 bytes (0,5 de la línia 12345)"
    for lang in ("ca", "es"):
        assert (load_table(lang)[THOUSANDS], load_table(lang)[DECIMAL]) == (".", ",")


APP = Path(__file__).resolve().parents[2] / "app"


def phrase_template(node: ast.AST) -> ast.expr | None:
    """The template expression of a ``Phrase.of(TEMPLATE, ...)`` call (``None``: not one)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "of"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "Phrase"
        and node.args
    ):
        return node.args[0]
    return None


def phrase_templates_in_app() -> list[tuple[str, ast.expr]]:
    """Every ``Phrase.of(TEMPLATE, ...)`` written in app/: where, and the template expression."""
    found: list[tuple[str, ast.expr]] = []
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            template = phrase_template(node)
            if template is not None:
                found.append((f"{path.relative_to(APP.parent)}:{node.lineno}", template))
    return found


@pytest.mark.parametrize("lang", TABLE_LANGS)
def test_every_phrase_the_app_writes_is_in_the_table_with_its_parameters(lang: str) -> None:
    """Each literal template of a ``Phrase.of`` in app/ (an error's message or a piece of one, a
    skip's reason, an export's note) is in the table and its translation fills in the same
    parameters; no template is an f-string (a template named by a constant is checked where
    the constant's words are)."""
    table, parse = load_table(lang), string.Formatter().parse
    templates = phrase_templates_in_app()
    assert len(templates) > 400  # the scan finds the app's phrases
    problems = []
    for where, node in templates:
        if isinstance(node, ast.JoinedStr):
            problems.append(f"{where}: an f-string")
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        said = table.get(node.value)
        if not said:
            problems.append(f"{where}: {node.value!r} is not in the table")
        elif {p[1] for p in parse(node.value) if p[1]} != {p[1] for p in parse(said) if p[1]}:
            problems.append(f"{where}: {node.value!r} -> {said!r}")
    assert problems == []
