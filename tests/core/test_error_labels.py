"""Every error code written in ``app/`` has a label in English (:data:`ERROR_LABELS`) and in the
Catalan and Spanish tables (``error.<code>``), so the app and the CLI say what went wrong in the
archivist's language."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from app.core.error_labels import ERROR_LABELS, error_label, label_key, labelled
from app.core.errors import ArchiveError
from app.core.i18n_tables import TABLE_LANGS, load_table

APP = Path(__file__).resolve().parents[2] / "app"
NAMESPACES = {
    "agent", "ai", "api", "archive", "auth", "conversation", "export", "import", "index", "mcp",
    "request", "serve", "user",
}  # fmt: skip
"""The first parts of the codes (``archive.corrupt``): the families of errors in app/."""
CODE = re.compile(r"([a-z]+)\.[a-z][a-z0-9_]*")
NOT_CODES = {
    "archive.db": "the archive's database file name",
    "conversation.md": "the file name a conversation is saved under",
    "index.model": "the setting naming the index's embedding model",
}
"""Strings that look like codes but are not (a test below checks they are still in app/)."""


def codes_in_app() -> dict[str, str]:
    """Every string in app/'s source written as a code (``"import.bad_row"``: as the errors,
    the constants and the status tables write them), with where it is first written."""
    found: dict[str, str] = {}
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            match = CODE.fullmatch(node.value)
            if match and match.group(1) in NAMESPACES:
                found.setdefault(node.value, f"{path.relative_to(APP.parent)}:{node.lineno}")
    return found


@pytest.fixture(scope="module")
def codes() -> dict[str, str]:
    return {code: where for code, where in codes_in_app().items() if code not in NOT_CODES}


def test_the_scan_finds_the_codes_the_errors_are_raised_with(codes: dict[str, str]) -> None:
    # a code raised inline, a module constant and a code in an HTTP status table
    assert {"archive.corrupt", "import.bad_row", "mcp.plan_hash_mismatch"} <= set(codes)
    assert set(NOT_CODES) <= set(codes_in_app()), "a string NOT_CODES names is gone from app/"


def test_every_code_has_an_english_label(codes: dict[str, str]) -> None:
    missing = {code: where for code, where in codes.items() if not ERROR_LABELS.get(code)}
    assert not missing, f"add these to ERROR_LABELS in app/core/error_labels.py: {missing}"


@pytest.mark.parametrize("lang", TABLE_LANGS)
def test_every_code_has_a_label_in_each_table(codes: dict[str, str], lang: str) -> None:
    table = load_table(lang)
    missing = {code: where for code, where in codes.items() if not table.get(label_key(code))}
    assert not missing, f"add error.<code> to resources/i18n/{lang}.json: {missing}"


@pytest.mark.parametrize("lang", TABLE_LANGS)
def test_no_label_is_left_for_a_code_no_longer_written(codes: dict[str, str], lang: str) -> None:
    table = load_table(lang)
    stale = {key for key in table if key.startswith("error.") and key[6:] not in codes}
    assert not stale and not set(ERROR_LABELS) - set(codes), stale


def test_a_label_is_said_in_the_table_s_language_and_in_english_without_one() -> None:
    error = ArchiveError("archive.corrupt", "The archive database x is damaged.")
    assert error_label(error.code, load_table("ca")) == "Arxiu malmès"
    assert error_label(error.code, load_table("es")) == "Archivo dañado"
    assert error_label(error.code, {}) == "Archive damaged"
    assert error.label_key == label_key(error.code)
    assert error_label("archive.never_raised", {}) is None


def test_a_reason_the_table_does_not_hold_is_led_by_its_label_and_no_other() -> None:
    """:func:`labelled`: a reason in the table's language stands alone (the label would repeat
    it); one still in English (an OS's words) is led by the label; English has no label."""
    catalan = load_table("ca")
    english = "database disk image is malformed"
    assert labelled("archive.corrupt", english, english, catalan) == f"Arxiu malmès: {english}"
    assert labelled("archive.corrupt", "Ja traduït.", english, catalan) == "Ja traduït."
    assert labelled("archive.corrupt", english, english, {}) == english
    assert labelled("archive.corrupt", "", "", catalan) == "Arxiu malmès"
