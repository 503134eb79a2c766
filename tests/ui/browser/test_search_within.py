"""Search within a description: from a fonds's record view, the search is kept to the fonds
and everything under it, the search bar and the results heading say so, and ✕ searches the
whole archive again (real ANF finding aids, a real index; ca/es/en)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication

from app.core.archive import Archive, RecordKey, open_archive
from app.core.archive.hierarchy import subtree
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.ui.browser.record_html import parse_within_link
from app.ui.main_window import MainWindow
from tests.conftest import shared_data
from tests.ui.conftest import WindowFactory, run

FINDING_AIDS = ("FRAN_IR_003500.xml", "FRAN_IR_007375.xml", "FRAN_IR_009555.xml")
"""Three ANF finding aids: the Vitet papers and two other fonds."""
SAID = {
    "en": ("Search within this description", "Within: ", ", within "),
    "ca": ("Cerca dins d'aquesta descripció", "Dins de: ", ", dins de "),
    "es": ("Buscar dentro de esta descripción", "Dentro de: ", ", dentro de "),
}


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


def _search(factory: WindowFactory, window: MainWindow, query: str) -> set[RecordKey]:
    window.search_box.setText(query)
    run(factory.loop, window.search(query))
    for _ in range(5):
        QApplication.processEvents()
    return {hit.key for hit in window.results.shown()}


def _shown(factory: WindowFactory, window: MainWindow) -> set[RecordKey]:
    """The records listed once the search the window started has ended."""
    run(factory.loop, window.tasks.wait())
    for _ in range(5):
        QApplication.processEvents()
    return {hit.key for hit in window.results.shown()}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_a_fonds_is_searched_within_and_the_whole_archive_again(
    fonds_window: tuple[WindowFactory, MainWindow, RecordKey], ui_lang: str
) -> None:
    factory, window, vitet = fonds_window
    link, button, heading = SAID[ui_lang]
    everywhere = _search(factory, window, "correspondance")
    inside = set(subtree(window.services.archive, vitet))
    assert everywhere & inside and everywhere - inside  # the word is in other fonds too

    window.open_record(vitet)
    page = window.record_view.browser.toHtml()
    assert link in window.record_view.browser.toPlainText() and f"within:{vitet}" in page
    window.record_view.browser.anchorClicked.emit(QUrl(f"within:{vitet}"))  # the link clicked
    found = _shown(factory, window)  # the query typed is searched within at once

    label = window.scope_label()
    assert window.search_scope == vitet and window.scope_action.isVisible()
    assert window.scope_button.text().startswith(button + label) and "Vitet" in label
    assert found and found <= inside and (everywhere & inside) <= found
    assert window.results.title.text().endswith(heading + label)

    window.scope_button.click()  # ✕: the whole archive again, the query searched again
    again = _shown(factory, window)
    assert window.search_scope is None and not window.scope_action.isVisible()
    assert again == everywhere and heading not in window.results.title.text()


def test_a_record_without_contents_offers_no_search_within(
    fonds_window: tuple[WindowFactory, MainWindow, RecordKey],
) -> None:
    """No link on a unit without contents; a scope deleted since finds nothing (not the
    whole archive)."""
    factory, window, vitet = fonds_window
    window.search_within(RecordKey("ead1", 10**9))
    assert _search(factory, window, "correspondance") == set()
    leaf = max(subtree(window.services.archive, vitet), key=lambda k: k.section_id)
    window.open_record(leaf)
    assert "within:" not in window.record_view.browser.toHtml()
    assert parse_within_link("within:ead1/x") is None and parse_within_link("record:ead1/1") is None
