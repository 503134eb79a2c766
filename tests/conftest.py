"""Shared fixtures: offline hubs, a private ARXIU_HOME, fresh and demo archives; and the check
every test gets: a WARNING (or worse) log record it did not declare fails it."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core.archive import Archive, open_archive

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared dataset not available: {path}")
    return path


EXPECTED_LOGS: tuple[tuple[str, str], ...] = ()
"""(logger name prefix, message part) of WARNING records allowed in every test, each with its
reason; a test declares what it alone expects with ``@pytest.mark.allow_log``."""


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``allow_log`` marker."""
    config.addinivalue_line(
        "markers",
        "allow_log(logger, message=''): a WARNING-or-worse record this test expects, from "
        "`logger` (or a logger under it) whose message contains `message`",
    )


def _allowed(record: logging.LogRecord, allowances: list[tuple[str, str]]) -> bool:
    message = record.getMessage()
    return any(
        (record.name == name or record.name.startswith(name + ".")) and part in message
        for name, part in allowances
    )


@pytest.fixture(autouse=True)
def no_unexpected_warnings(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    """Fail a test on a WARNING (or worse) log record it did not declare: bugs are visible."""
    yield
    allowances = list(EXPECTED_LOGS)
    for marker in request.node.iter_markers("allow_log"):
        allowances += [(name, str(marker.kwargs.get("message", ""))) for name in marker.args]
    records = [*caplog.get_records("setup"), *caplog.get_records("call")]
    bad = [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in records
        if r.levelno >= logging.WARNING and not _allowed(r, allowances)
    ]
    assert not bad, f"unexpected log records (fix them, or mark the test allow_log): {bad}"


@pytest.fixture(autouse=True)
def arxiu_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty ARXIU_HOME (settings, catalog, default archive)."""
    home = tmp_path_factory.mktemp("arxiu-home")
    monkeypatch.setenv("ARXIU_HOME", str(home))
    return home


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    """A fresh, empty archive."""
    arch = open_archive(tmp_path / "archive", create=True)
    yield arch
    arch.close()


@pytest.fixture(scope="session")
def demo_archive_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo archive built once per test session; copy it (or open it read-only) to use it."""
    from app.core.archive.demo import create_demo_archive

    folder = tmp_path_factory.mktemp("demo-archive") / "archive"
    create_demo_archive(folder).close()
    return folder
