"""The window's first search on a fresh home lists records before the background indexer has
chunked the new demo archive (it listed none until chunking finished)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import qasync

from app.core.archive import Archive
from app.core.archive.demo import create_demo_archive
from app.core.index import HashingEmbedder, Index
from app.ui.app_settings import AppSettings
from app.ui.main_window import MainWindow
from app.ui.services import Services
from tests.ui.conftest import run


def test_the_first_search_on_a_new_demo_lists_records(
    qtbot: Any, qloop: qasync.QEventLoop, tmp_path: Path
) -> None:
    archive = create_demo_archive(tmp_path / "demo")
    built: list[Index] = []

    def index_factory(opened: Archive, _settings: AppSettings) -> Index:
        built.append(Index(opened, HashingEmbedder()))  # its indexer not started yet
        return built[0]

    services = Services(archive, AppSettings(), index_factory=index_factory)
    window = MainWindow(services)
    window.show()
    try:
        run(qloop, window.search("pantà"))
        shown = window.results.shown()
        assert shown, "the first search listed no record"
        assert any(hit.key.section_tipo == "oh1" for hit in shown)
        assert built and built[0].stats().chunks > 0
    finally:
        window.close()
        run(qloop, window.aclose())
        run(qloop, services.aclose())
        window.deleteLater()
        archive.close()
