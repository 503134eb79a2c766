"""Search within a description: from a fonds's record view, the search is kept to the fonds
and everything under it, the search bar and the results heading say so, and ✕ searches the
whole archive again (real ANF finding aids, a real index; ca/es/en)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication

from app.core.archive import RecordKey
from app.core.archive.hierarchy import subtree
from app.ui.browser.record_html import WITHIN, parse_key_link
from app.ui.main_window import MainWindow
from tests.ui.conftest import WindowFactory, run

SAID = {
    "en": ("Search within this description", "Within: ", ", within "),
    "ca": ("Cerca dins d'aquesta descripció", "Dins de: ", ", dins de "),
    "es": ("Buscar dentro de esta descripción", "Dentro de: ", ", dentro de "),
}


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
    assert found and found <= inside and len(found) >= len(everywhere & inside)
    assert all(hit.within is None for hit in window.results.shown())  # the heading says it
    assert any(hit.path for hit in window.results.shown())  # the series each unit is in
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
    assert parse_key_link("within:ead1/x", WITHIN) is None
    assert parse_key_link("record:ead1/1", WITHIN) is None
