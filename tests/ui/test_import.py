"""File → Import…: a slice of the nomisma dataset imported with a progress dialog."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path
from typing import Any

import pytest

from app.core.archive.importers import ImportSummary
from app.ui.browser.sections_view import TIPO_ROLE
from app.ui.import_dialog import ImportRunner, progress_dialog
from tests.ui.conftest import run

REPO = Path(__file__).resolve().parents[2]
NOMISMA = REPO.parent / "shared" / "data" / "nomisma" / "concepts.jsonl.gz"
LINES = 1200


@pytest.fixture
def nomisma_slice(tmp_path: Path) -> Path:
    """The first ``LINES`` lines of the real nomisma concepts, as a gzip of their own."""
    if not NOMISMA.exists():
        pytest.skip(f"dataset not found: {NOMISMA}")
    target = tmp_path / "concepts.jsonl.gz"
    with gzip.open(NOMISMA, "rt", encoding="utf-8") as source:
        lines = list(itertools.islice(source, LINES))
    with gzip.open(target, "wt", encoding="utf-8") as out:
        out.writelines(lines)
    return target


def test_import_shows_progress_then_the_summary_and_the_new_section(
    make_window: Any, nomisma_slice: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window()
    seen: list[tuple[int, int]] = []
    shown = ImportRunner._show

    def spy(self: ImportRunner, done: int, total: int) -> None:
        seen.append((done, total))
        shown(self, done, total)

    monkeypatch.setattr(ImportRunner, "_show", spy)
    text = run(make_window.loop, window.import_dataset("nomisma", nomisma_slice), 60)
    archive = window.services.archive
    assert archive.has_section("nomisma1")
    count = archive.count_records("nomisma1")
    assert count > 0 and f"{count:,} records" in text
    assert len(seen) >= 2 and seen[-1][0] == seen[-1][1] >= LINES - 1
    tipos = [window.sections.item(row).data(TIPO_ROLE) for row in range(window.sections.count())]
    assert "nomisma1" in tipos
    assert window.import_report is not None and window.import_report.text() == text
    window.import_report.close()


def test_cancel_stops_the_import_and_says_so(make_window: Any, nomisma_slice: Path) -> None:
    window = make_window()
    dialog = progress_dialog(window, "nomisma", nomisma_slice)
    runner = ImportRunner(window.services, dialog)
    dialog.canceled.emit()  # what the Cancel button sends
    summary: ImportSummary | None = run(make_window.loop, runner.run("nomisma", nomisma_slice), 60)
    assert summary is None
    archive = window.services.archive
    written = archive.count_records("nomisma1") if archive.has_section("nomisma1") else 0
    assert written < LINES  # stopped at the first progress report, after one batch at most
    dialog.deleteLater()


def test_an_unreadable_file_is_reported_not_raised(make_window: Any, tmp_path: Path) -> None:
    window = make_window()
    text = run(make_window.loop, window.import_dataset("nomisma", tmp_path / "missing.jsonl.gz"))
    assert "missing.jsonl.gz" in text
    assert window.import_report is not None
    window.import_report.close()
