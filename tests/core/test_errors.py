"""The coded error tree's helpers: a bug is logged once, however many handlers it passes; an
error's message and hint are said in the archivist's language."""

from __future__ import annotations

import ast
import logging
import string
from pathlib import Path

import pytest

from app.core.errors import ArchiveError, ArxiuError, log_bug, words_of
from app.core.i18n_tables import TABLE_LANGS, load_table
from app.core.phrases import Phrase
from tests.core.test_phrases import phrase_template

APP = Path(__file__).resolve().parents[2] / "app"
ERROR_TYPES = {
    "ArxiuError", "ArchiveError", "ImportFailed", "IndexError_", "ModelError", "ToolError",
    "DezfilRefusal", "RequestInvalid",
}  # fmt: skip
"""The coded error classes of app/ (a test below finds every subclass, so none is missed)."""
WORDS = ("message", "hint")


def _raise_and_catch() -> ZeroDivisionError:
    try:
        _ = 1 / 0
    except ZeroDivisionError as error:
        return error
    raise AssertionError("unreachable")


@pytest.mark.allow_log("tests.errors", message="ZeroDivisionError")
def test_a_bug_is_logged_with_its_traceback_by_the_first_handler_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = _raise_and_catch()
    first, second = logging.getLogger("tests.errors.first"), logging.getLogger("tests.errors.up")
    log_bug(first, error, "the loop")
    log_bug(second, error, "the crash dialog")
    (record,) = caplog.records
    assert record.name == "tests.errors.first" and record.levelno == logging.ERROR
    assert record.getMessage() == "bug in the loop: ZeroDivisionError: division by zero"
    assert record.exc_info is not None and "in _raise_and_catch" in caplog.text


@pytest.mark.allow_log("tests.errors", message="bug in")
def test_two_bugs_are_two_records(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("tests.errors")
    log_bug(log, _raise_and_catch(), "one place")
    log_bug(log, KeyError("k"), "another")
    assert [r.getMessage() for r in caplog.records] == [
        "bug in one place: ZeroDivisionError: division by zero",
        "bug in another: KeyError: 'k'",
    ]


def test_a_known_error_carries_no_exit_code_of_its_own() -> None:
    """The CLI's exit code follows from the category (:mod:`app.commands.exits`)."""
    from app.commands.exits import EXIT_ENVIRONMENT, EXIT_INPUT, exit_code

    assert not hasattr(ArxiuError("x.y", "m"), "exit_code")
    assert exit_code(ArxiuError("x.y", "m", category="input").category) == EXIT_INPUT
    assert exit_code(ArxiuError("x.y", "m").category) == EXIT_ENVIRONMENT


def test_the_details_are_kept_as_json_a_copy_of_what_was_given() -> None:
    """``details`` are the error's wire form: tuples as lists, a value that is not JSON as
    its text (as the CLI's ``default=str`` printed it), nested mappings copied."""
    from pathlib import Path

    given: dict[str, object] = {"keys": ("a", "b"), "path": Path("/tmp/x.db"), "n": {1: None}}
    error = ArxiuError("x.y", "m", details=given)
    given["keys"] = "changed"
    assert error.details == {"keys": ["a", "b"], "path": "/tmp/x.db", "n": {"1": None}}
    assert error.to_dict()["details"] == error.details
    assert ArxiuError("x.y", "m").details == {} and "details" not in ArxiuError("x", "m").to_dict()


def test_an_import_failure_names_its_line_or_none() -> None:
    from app.core.errors import ImportFailed

    assert ImportFailed("import.xml_malformed", "m", details={"line": 7}).line == 7
    assert ImportFailed("import.xml_malformed", "m", details={"line": None}).line == 0
    assert ImportFailed("import.xml_malformed", "m", details={"line": True}).line == 0
    assert ImportFailed("import.bad", "m").line == 0


def error_words_in_app() -> list[tuple[str, str, ast.expr]]:
    """Every message and hint written where app/ makes a coded error: ``(where, "message" or
    "hint", the expression)`` (``RequestInvalid`` takes its message first, the others second)."""
    found: list[tuple[str, str, ast.expr]] = []
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in ERROR_TYPES:
                continue
            where = f"{path.relative_to(APP.parent)}:{node.lineno}"
            first = 0 if name == "RequestInvalid" else 1
            if len(node.args) > first:
                found.append((where, "message", node.args[first]))
            found += [(where, k.arg, k.value) for k in node.keywords if k.arg in WORDS]
    return found


def written_words(node: ast.expr) -> str | None:
    """The English a message or hint expression writes: a sentence, or a phrase's template."""
    template = phrase_template(node) or node
    if isinstance(template, ast.Constant) and isinstance(template.value, str):
        return template.value
    return None


def test_every_error_class_of_the_app_is_scanned() -> None:
    """A new subclass of a coded error is added to :data:`ERROR_TYPES`, or the scan below would
    miss its messages."""
    subclasses = set()
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id in ERROR_TYPES for b in node.bases
            ):
                subclasses.add(node.name)
    assert subclasses <= ERROR_TYPES
    assert {"ArchiveError", "ImportFailed", "ToolError", "RequestInvalid"} <= subclasses


def test_no_error_message_or_hint_is_an_f_string() -> None:
    """An f-string cannot be translated: a message that names something is a phrase."""
    words = error_words_in_app()
    assert len(words) > 300  # the scan finds the app's errors
    f_strings = [f"{at} {what}" for at, what, node in words if isinstance(node, ast.JoinedStr)]
    assert f_strings == []


@pytest.mark.parametrize("lang", TABLE_LANGS)
def test_every_error_message_and_hint_is_said_in_catalan_and_spanish(lang: str) -> None:
    """Each sentence or phrase template written as an error's message or hint is in the table,
    and its translation fills in the same parameters."""
    table, parse = load_table(lang), string.Formatter().parse
    missing, misfit = [], []
    for where, what, node in error_words_in_app():
        english = written_words(node)
        if english is None:
            continue  # passed on from another error, or an OS's or a library's own text
        said = table.get(english)
        if not said:
            missing.append(f"{where} {what}: {english!r}")
        elif {p[1] for p in parse(english) if p[1]} != {p[1] for p in parse(said) if p[1]}:
            misfit.append(f"{where} {what}: {english!r} -> {said!r}")
    assert missing == []
    assert misfit == []


def test_an_error_says_its_message_and_hint_in_a_table_s_language() -> None:
    error = ArchiveError(
        "archive.section_unknown",
        Phrase.of("The archive has no section {section!r}.", section="fons"),
        hint="`arxiu archive info` lists the sections.",
    )
    assert error.message == "The archive has no section 'fons'."
    assert str(error) == (
        "[archive.section_unknown] The archive has no section 'fons'. "
        "(`arxiu archive info` lists the sections.)"
    )
    table = {
        "The archive has no section {section!r}.": "L'arxiu no té cap secció «{section}».",
        "`arxiu archive info` lists the sections.": "`arxiu archive info` n'enumera les seccions.",
    }
    assert error.message_in(table) == "L'arxiu no té cap secció «fons»."
    assert error.hint_in(table) == "`arxiu archive info` n'enumera les seccions."
    assert error.message_in({}) == error.message
    assert ArxiuError("x.y", "Plain {not a field}").message_in({}) == "Plain {not a field}"
    assert ArxiuError("x.y", "No hint").hint_in(table) is None


def test_a_payload_carries_the_phrase_and_a_bad_one_falls_back_to_the_english() -> None:
    """``to_dict`` adds the template and values of a phrase (not of a fixed sentence, which is
    its own key); :func:`words_of` makes the phrase again only where it gives the same English."""
    error = ArchiveError(
        "archive.x",
        Phrase.of("{n:,} records in {where!r}", n=1234, where="fons"),
        hint=Phrase.of("Try {tool}.", tool="arxiu"),
    )
    payload = error.to_dict()
    assert payload["template"] == "{n:,} records in {where!r}"
    assert payload["params"] == {"n": 1234, "where": "fons"}
    assert (payload["hint_template"], payload["hint_params"]) == ("Try {tool}.", {"tool": "arxiu"})
    assert "template" not in ArchiveError("archive.x", "A sentence.").to_dict()
    english = "1,234 records in 'fons'"
    assert words_of(payload, english) == error.message_words
    assert words_of(payload, "Try arxiu.", "hint_") == error.hint_words
    for bad in (
        {**payload, "params": {"n": "x", "where": "fons"}},  # a spec that does not fit
        {**payload, "params": {"n": 1234}},  # a value missing
        {**payload, "params": {"n": True, "where": "fons"}},  # not a phrase's value
        {**payload, "params": {"n": 99, "where": "fons"}},  # not the English sent
        {**payload, "template": 7},
        {**payload, "template": "{n.real} records in {where!r}"},  # an attribute
        {**payload, "template": "{n[0]} records in {where!r}"},  # an index
        {**payload, "template": "{n:>99999999} records in {where!r}"},  # a width
        {**payload, "template": "{n:,} records in {where!a}"},  # a conversion not made here
        {**payload, "template": "{n:,} records in {where!r} {"},  # not a template
    ):
        assert words_of(bad, english) == english


def test_a_phrase_among_the_values_travels_as_a_phrase() -> None:
    """A phrase's value that is a phrase itself (a reason, a part of a sentence) is carried as
    such and said in the client's language too."""
    inner = Phrase.of("it names no database")
    error = ArchiveError(
        "archive.pg_url_invalid",
        Phrase.of("{url} is not a usable PostgreSQL URL: {why}.", url="postgresql://h", why=inner),
    )
    payload = error.to_dict()
    assert payload["params"] == {
        "url": "postgresql://h",
        "why": {"template": "it names no database", "params": {}},
    }
    words = words_of(payload, error.message)
    assert words == error.message_words
    catalan = load_table("ca")
    assert ArchiveError("archive.pg_url_invalid", words).message_in(catalan) == (
        error.message_in(catalan)
    )
    assert "database" not in error.message_in(catalan)
