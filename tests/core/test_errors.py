"""The coded error tree's helpers: a bug is logged once, however many handlers it passes."""

from __future__ import annotations

import logging

import pytest

from app.core.errors import ArxiuError, log_bug


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
