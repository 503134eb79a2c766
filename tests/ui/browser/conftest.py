"""A window over three real ANF finding aids, indexed, for the hierarchy views' tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.ui.main_window import MainWindow
from tests.conftest import shared_data
from tests.ui.conftest import WindowFactory

FINDING_AIDS = ("FRAN_IR_003500.xml", "FRAN_IR_007375.xml", "FRAN_IR_009555.xml")
"""Three ANF finding aids: the Vitet papers and two other fonds."""


@pytest.fixture
def fonds_window(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> Iterator[tuple[WindowFactory, MainWindow, RecordKey]]:
    """A window over three imported finding aids with a (hashing) index; the Vitet fonds."""
    archive: Archive = open_archive(tmp_path / "fonds", create=True)
    for name in FINDING_AIDS:
        run_import(archive, "ead", shared_data("ead", "anf", name))
    factory = WindowFactory(qtbot, qloop, archive)
    window = factory()
    index = Index(archive, HashingEmbedder())
    index.index_now()
    window.services._index = index
    yield factory, window, external_keys(archive, "ead")["FRAN_IR_003500"]
    factory.close_all()
    archive.close()
