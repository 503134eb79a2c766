"""The check every test gets: an undeclared WARNING log record fails the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CASES = """
import logging

import pytest

log = logging.getLogger("app.example")


def test_warns_undeclared():
    log.warning("something is off")


@pytest.mark.allow_log("app.example", message="expected")
def test_warns_as_declared():
    log.warning("an expected warning")


@pytest.mark.allow_log("app.example", message="expected")
def test_errors_beyond_what_was_declared():
    log.error("a different problem")


def test_logs_info_only():
    log.info("fine")
"""


def test_an_undeclared_warning_fails_the_test_and_a_declared_one_does_not(tmp_path: Path) -> None:
    here = Path(__file__).parent
    (tmp_path / "conftest.py").write_text((here / "conftest.py").read_text())
    (tmp_path / "test_cases.py").write_text(CASES)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    out = done.stdout
    assert "ERROR test_cases.py::test_warns_undeclared" in out, out
    assert "something is off" in out
    assert "ERROR test_cases.py::test_errors_beyond_what_was_declared" in out, out
    assert "PASSED test_cases.py::test_warns_as_declared" in out, out
    assert "PASSED test_cases.py::test_logs_info_only" in out, out
